package load

import (
	"errors"
	"testing"

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
