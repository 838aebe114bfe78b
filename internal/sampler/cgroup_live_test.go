package sampler

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// spinThreads is a workload of four OS threads that never block.
func spinThreads() {
	for range 4 {
		go func() {
			runtime.LockOSThread()
			//lint:ignore SA5002 the point is a thread that never blocks.
			for {
			}
		}()
	}
	fmt.Println("ready")
	var b [1]byte
	os.Stdin.Read(b[:])
	os.Exit(0)
}

// testCgroup is a cgroup made for one test, with a CPU quota.
type testCgroup struct {
	dir, path string
	v1        bool
}

// makeQuotaCgroup creates a uniquely named cgroup with a quota of half a
// CPU in whichever hierarchy has the cpu controller, and removes it when
// the test ends.
func makeQuotaCgroup(t *testing.T) testCgroup {
	t.Helper()
	return makeQuotaCgroupNamed(t, fmt.Sprintf("ctxtop-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
}

// makeQuotaCgroupNamed is makeQuotaCgroup with the group's name given.
func makeQuotaCgroupNamed(t *testing.T, name string) testCgroup {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating a cgroup needs root; skipped (run as root to check throttling against the kernel)")
	}
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	mounts, err := fs.CgroupMounts()
	if err != nil {
		t.Skip("cannot read mountinfo:", err)
	}
	var cg testCgroup
	switch {
	case mounts.CPU != "" && mounts.CPURoot == "/":
		cg = testCgroup{dir: filepath.Join(mounts.CPU, name), path: "/" + name, v1: true}
	case mounts.V2 != "" && mounts.V2Root == "/":
		ctl, _ := os.ReadFile(filepath.Join(mounts.V2, "cgroup.subtree_control"))
		if !strings.Contains(" "+string(ctl), " cpu") {
			_ = os.WriteFile(filepath.Join(mounts.V2, "cgroup.subtree_control"), []byte("+cpu"), 0)
			ctl, _ = os.ReadFile(filepath.Join(mounts.V2, "cgroup.subtree_control"))
			if !strings.Contains(" "+string(ctl), " cpu") {
				t.Skip("cgroup v2 without the cpu controller at its root; skipped")
			}
		}
		cg = testCgroup{dir: filepath.Join(mounts.V2, name), path: "/" + name}
	default:
		t.Skip("no cgroup hierarchy with the cpu controller mounted; skipped")
	}
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup (%v); skipped", err)
	}
	t.Cleanup(func() {
		// The workload is killed by its own cleanup, registered later and
		// so run first; rmdir may still race its exit for a moment.
		for range 50 {
			if err := os.Remove(cg.dir); err == nil || os.IsNotExist(err) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("could not remove test cgroup %s", cg.dir)
	})
	// The greatest weight, so that on a machine busy with other work the
	// spinners still get past their quota and are throttled.
	if cg.v1 {
		write(t, filepath.Join(cg.dir, "cpu.cfs_period_us"), "100000")
		write(t, filepath.Join(cg.dir, "cpu.cfs_quota_us"), "50000")
		write(t, filepath.Join(cg.dir, "cpu.shares"), "262144")
	} else {
		write(t, filepath.Join(cg.dir, "cpu.max"), "50000 100000")
		write(t, filepath.Join(cg.dir, "cpu.weight"), "10000")
	}
	return cg
}

func write(t *testing.T, path, v string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(v), 0); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
}

func (cg testCgroup) stat(t *testing.T) procfs.CgroupCPUStat {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cg.dir, "cpu.stat"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := procfs.ParseCgroupCPUStat(b, "cpu.stat")
	if err != nil || !s.HasThrottling {
		t.Fatalf("cpu.stat %q: %v", b, err)
	}
	return s
}

// TestThrottledCgroupAgainstKernel runs four CPU-bound threads in a cgroup
// limited to half a CPU and checks ctxtop's row for it against the group's
// own cpu.stat over the same intervals.
func TestThrottledCgroupAgainstKernel(t *testing.T) {
	cg := makeQuotaCgroup(t)
	pid := startChild(t, "CTXTOP_SPIN_THREADS=1", nil)
	write(t, filepath.Join(cg.dir, "cgroup.procs"), strconv.Itoa(pid))

	mon, err := NewMonitor(Config{Root: "/proc", PIDs: []int{pid}})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	// The first refresh has the group in one sample only; then two
	// intervals of 1.5 s (15 CFS periods each) are compared.
	time.Sleep(300 * time.Millisecond)
	if _, err := mon.Next(); err != nil {
		t.Fatal(err)
	}
	before := cg.stat(t)
	throttled := 0
	for i := range 2 {
		time.Sleep(1500 * time.Millisecond)
		snap, err := mon.Next()
		if err != nil {
			t.Fatal(err)
		}
		after := cg.stat(t)
		own := 100 * float64(after.Throttled-before.Throttled) / float64(after.Periods-before.Periods)
		ownMs := float64(after.ThrottledNs-before.ThrottledNs) / 1e6 / snap.Interval.Seconds()
		before = after
		if checkThrottledSnapshot(t, i, snap, cg.path, pid, own, ownMs) {
			throttled++
		}
	}
	if throttled == 0 {
		t.Skip("the machine is so busy the spinners never used their half CPU: the group was not throttled; skipped")
	}
}

// checkThrottledSnapshot checks one interval; the hot and reason checks
// need the kernel to have throttled the group, which it reports.
func checkThrottledSnapshot(t *testing.T, i int, snap model.Snapshot, path string, pid int, own, ownMs float64) bool {
	t.Helper()
	var row *model.CgroupRates
	for k := range snap.Cgroups {
		if snap.Cgroups[k].Path == path {
			row = &snap.Cgroups[k]
		}
	}
	if row == nil {
		t.Fatalf("interval %d: no row for %s in %+v", i, path, snap.Cgroups)
	}
	t.Logf("interval %d: ctxtop throttled %.1f%% %.0f ms/s, cpu.stat %.1f%% %.0f ms/s; cgroup CPU %.1f%%, %d threads, %s",
		i, row.ThrottledPercent, row.ThrottledMsPerSec, own, ownMs, row.CPUPercent, row.Threads, row.Why)
	if !row.HasThrottling || math.Abs(row.ThrottledPercent-own) > 10 {
		t.Errorf("interval %d: throttled %.1f%%, cgroup's own cpu.stat says %.1f%%", i, row.ThrottledPercent, own)
	}
	if row.LimitCPUs != 0.5 {
		t.Errorf("interval %d: limit %v CPUs, want 0.5", i, row.LimitCPUs)
	}
	throttled := own >= model.ThrottledHot+10
	if throttled && (!row.Hot || row.Why.Kind != model.Throttled) {
		t.Errorf("interval %d: row hot=%v reason %q, want hot, throttled", i, row.Hot, row.Why)
	}
	// The row is the sum of the process's threads.
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var cpu float64
	var reasons bytes.Buffer
	for _, th := range snap.Threads {
		if th.PID != pid {
			continue
		}
		cpu += th.CPUPercent
		if th.CPUPercent > 5 {
			fmt.Fprintf(&reasons, " %d:%q", th.TID, th.Why)
			if throttled && (!th.Hot || th.Why.Kind != model.Preempted || !th.Why.InThrottled) {
				t.Errorf("interval %d: spinning thread %d hot=%v reason %q, want the throttled reason", i, th.TID, th.Hot, th.Why)
			}
		}
	}
	if row.Processes != 1 || row.Threads != len(tasks) || math.Abs(row.CPUPercent-cpu) > 0.01 {
		t.Errorf("interval %d: row %d processes %d threads %.2f%% CPU; the process has %d threads, %.2f%% CPU",
			i, row.Processes, row.Threads, row.CPUPercent, len(tasks), cpu)
	}
	if row.CPUPercent > 65 {
		t.Errorf("interval %d: threads at %.1f%% CPU in all, over the 50%% quota", i, row.CPUPercent)
	}
	t.Logf("thread reasons:%s", reasons.String())
	return throttled
}

// TestHostileCgroupNameCleanedWhereItEnters: root may name a cgroup with an
// escape sequence, a tab and a bidi override. The sample holds the path
// cleaned once (what live output, the exporter and a recording all show),
// and the group's limit is still read from its real directory.
func TestHostileCgroupNameCleanedWhereItEnters(t *testing.T) {
	raw := fmt.Sprintf("ctxtop-test-%d-%d-\x1b[31m\tred\u202eevil", os.Getpid(), time.Now().UnixNano())
	cg := makeQuotaCgroupNamed(t, raw)
	pid := startChild(t, "CTXTOP_SPIN_THREADS=1", nil)
	write(t, filepath.Join(cg.dir, "cgroup.procs"), strconv.Itoa(pid))
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}})
	var smp model.Sample
	mustSample(t, s, &smp)
	clean := sanitize.Name(cg.path)
	if clean == cg.path || !sanitize.Clean(clean) {
		t.Fatalf("test name %q does not exercise the cleaning", cg.path)
	}
	var got []model.CgroupCounters
	for _, c := range smp.Cgroups {
		if strings.Contains(c.Path, "ctxtop-test-") {
			got = append(got, model.CgroupCounters{Path: c.Path, LimitCPUs: c.LimitCPUs})
		}
	}
	want := []model.CgroupCounters{{Path: clean, LimitCPUs: 0.5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the hostile group in the sample (-want +got):\n%s", diff)
	}
	for _, tc := range smp.Tasks {
		if tc.PID == pid && tc.Cgroup != clean {
			t.Errorf("task %d/%d in cgroup %q, want %q", tc.PID, tc.TID, tc.Cgroup, clean)
		}
	}
}
