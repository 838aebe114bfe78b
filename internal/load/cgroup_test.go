package load

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFindCPUCgroup: on a hybrid system (v1 controllers, cgroup2 with none
// beside them) ctxtop takes v1's cpu hierarchy at its own place; with cpu
// delegated by the v2 root, v2; with neither, a one-line error.
func TestFindCPUCgroup(t *testing.T) {
	const hybrid = `25 24 0:22 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
26 25 0:23 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
28 25 0:25 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
29 25 0:26 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
`
	const own = "4:cpu,cpuacct:/user.slice/session-3.scope\n3:cpuset:/\n0::/user.slice\n"
	noControllers := func(string) ([]byte, error) { return []byte("\n"), nil }
	type result struct {
		Dir string
		V2  bool
	}
	for _, c := range []struct {
		name, mounts, own string
		read              func(string) ([]byte, error)
		want              result
	}{
		{"hybrid", hybrid, own, noControllers, result{"/sys/fs/cgroup/cpu,cpuacct/user.slice/session-3.scope", false}},
		{"v2 with cpu", "30 1 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n",
			func(p string) ([]byte, error) {
				if p != "/sys/fs/cgroup/cgroup.subtree_control" {
					return nil, errors.New("unexpected " + p)
				}
				return []byte("cpuset cpu io memory pids\n"), nil
			}, result{"/sys/fs/cgroup", true}},
		{"v1 in a container's subtree", "40 1 0:30 /docker/abc /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n",
			"5:cpu:/docker/abc/job\n", noControllers, result{"/sys/fs/cgroup/cpu/job", false}},
		// mountinfo escapes blanks in paths as octal.
		{"v1 at an escaped mount point", "40 1 0:30 / /mnt/cg\\040cpu rw - cgroup cgroup rw,cpu\n",
			"5:cpu:/job\n", noControllers, result{"/mnt/cg cpu/job", false}},
	} {
		dir, v2, err := findCPUCgroup(c.mounts, c.own, c.read)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, result{dir, v2}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	_, _, err := findCPUCgroup("26 25 0:23 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n", "0::/\n", noControllers)
	if err == nil {
		t.Error("no cpu controller anywhere, but no error")
	}
}

func TestParseCPUStat(t *testing.T) {
	got := parseCPUStat([]byte("nr_periods 30\nnr_throttled 12\nthrottled_time 1500000000\nnr_bursts 0\n"))
	want := map[string]uint64{"nr_periods": 30, "nr_throttled": 12, "throttled_time": 1500000000, "nr_bursts": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cpu.stat (-want +got):\n%s", diff)
	}
	var s Summary
	(&cgroup{dir: t.TempDir(), quota: 0.5}).summarize(&s)
	if s.CPUQuota != 0.5 || s.ThrottledShare != nil {
		t.Errorf("summary without a cpu.stat: %+v", s)
	}
}

func TestParsePoolName(t *testing.T) {
	type owner struct {
		PID      int
		Start    uint64
		HasStart bool
		OK       bool
	}
	for _, c := range []struct {
		name string
		want owner
	}{
		{"ctxtop-pool-4242-69112-123456", owner{4242, 69112, true, true}},
		{"ctxtop-pool-4242-123456", owner{4242, 0, false, true}}, // before the start time was in the name
		{"ctxtop-pool-4242", owner{}},
		{"ctxtop-pool-4242-1-2-3", owner{}},
		{"ctxtop-pool-0-1-2", owner{}},
		{"ctxtop-pool-99999999-1-2", owner{}},
		{"ctxtop-pool--1-2", owner{}},
		{"ctxtop-pool-+12-1-2", owner{}},
		{"ctxtop-pool-012-1-2", owner{}},
		{"ctxtop-pool-12-1-x", owner{}},
		{"ctxtop-poolx-12-1-2", owner{}},
		{"my-ctxtop-pool-12-1-2", owner{}},
		{"system.slice", owner{}},
	} {
		pid, start, hasStart, ok := parsePoolName(c.name)
		if diff := cmp.Diff(c.want, owner{pid, start, hasStart, ok}); diff != "" {
			t.Errorf("parsePoolName(%q) (-want +got):\n%s", c.name, diff)
		}
	}
	pid, start, hasStart, ok := parsePoolName(poolName(77, 88, 99))
	if diff := cmp.Diff(owner{77, 88, true, true}, owner{pid, start, hasStart, ok}); diff != "" {
		t.Errorf("poolName then parsePoolName (-want +got):\n%s", diff)
	}
}

func FuzzParsePoolName(f *testing.F) {
	f.Add("ctxtop-pool-4242-69112-123456")
	f.Add("ctxtop-pool-4242-123456")
	f.Fuzz(func(t *testing.T, name string) {
		pid, start, hasStart, ok := parsePoolName(name)
		if !ok || !hasStart {
			return
		}
		if pid <= 0 {
			t.Errorf("parsePoolName(%q): PID %d accepted", name, pid)
		}
		if p2, s2, h2, ok2 := parsePoolName(poolName(pid, start, 1)); !ok2 || p2 != pid || s2 != start || !h2 {
			t.Errorf("parsePoolName(%q) = %d, %d, but the name made of them reads %d, %d, %v", name, pid, start, p2, s2, ok2)
		}
	})
}

// TestSweepStale runs the sweep over real cgroups (root): it removes an
// empty group of ctxtop's naming whose owner is gone, or whose PID now
// belongs to a process started later, and nothing else: not a live owner's
// group, not a group with a process in it, not a group of another name.
func TestSweepStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("makes cgroups: needs root")
	}
	root, _, err := cgroupRoot()
	if err != nil {
		t.Skip(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := gone.ProcessState.Pid()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", dead)); err == nil {
		t.Skipf("PID %d reused already", dead)
	}
	me := os.Getpid()
	myStart, err := startTime(me)
	if err != nil {
		t.Fatal(err)
	}
	tag := time.Now().UnixNano() % 1e6
	names := map[string]bool{ // name: removed by the sweep
		poolName(dead, 5, tag):                         true,
		fmt.Sprintf("%s%d-%d", poolPrefix, dead, tag):  true,  // older naming
		poolName(me, myStart+1, tag):                   true,  // my PID, another start: a reused PID
		poolName(me, myStart, tag):                     false, // alive
		poolName(dead, 6, tag):                         false, // a process inside
		fmt.Sprintf("ctxtop-poolx-%d-5-%d", dead, tag): false,
	}
	for name := range names {
		if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sleeper.Process.Kill()
		sleeper.Wait()
		for name := range names {
			(&cgroup{dir: filepath.Join(root, name)}).remove()
		}
	})
	busy := filepath.Join(root, poolName(dead, 6, tag))
	if err := os.WriteFile(filepath.Join(busy, "cgroup.procs"), []byte(fmt.Sprint(sleeper.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	sweepStale(root, ownerAlive)
	want, got := map[string]bool{}, map[string]bool{}
	for name, removed := range names {
		want[name] = !removed
		_, err := os.Lstat(filepath.Join(root, name))
		got[name] = err == nil
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("groups left after the sweep (-want +got):\n%s", diff)
	}
}
