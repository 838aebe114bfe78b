package sampler

import (
	"fmt"
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
