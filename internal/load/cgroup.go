package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// cfsPeriodUs is the CFS bandwidth period ctxtop sets: the kernel's
// default, 100 ms, so that throttling behaves as in a container.
const cfsPeriodUs = 100000

// cgroup is one CPU-limited cgroup ctxtop made for a pool, on whichever
// hierarchy has the cpu controller: cgroup v2 (cpu.max) or v1
// (cpu.cfs_quota_us).
type cgroup struct {
	dir   string
	v2    bool
	quota float64
}

// cgroupRoot finds a hierarchy with a usable cpu controller: cgroup v2 when
// its root delegates cpu to children, else the v1 hierarchy that has cpu
// mounted, at this process's own place in it.
func cgroupRoot() (dir string, v2 bool, err error) {
	mounts, err := procfs.ReadFile(selfProc.Path("self", "mountinfo"), procfs.LimitStat)
	if err != nil {
		return "", false, err
	}
	own, _ := procfs.ReadFile(selfProc.Path("self", "cgroup"), procfs.LimitStatus)
	return findCPUCgroup(string(mounts), string(own), os.ReadFile)
}

// findCPUCgroup is cgroupRoot on the contents of /proc/self/mountinfo and
// /proc/self/cgroup, which procfs parses as the sampler does; readFile
// reads a v2 root's cgroup.subtree_control. On a hybrid system (v1
// controllers, cgroup2 mounted beside them with no controllers of its own)
// it picks v1.
func findCPUCgroup(mounts, own string, readFile func(string) ([]byte, error)) (dir string, v2 bool, err error) {
	m, err := procfs.ParseCgroupMounts([]byte(mounts), "/proc/self/mountinfo")
	if err != nil {
		return "", false, fmt.Errorf("--cpu-quota: %w", err)
	}
	if m.V2 != "" {
		ctl, _ := readFile(filepath.Join(m.V2, "cgroup.subtree_control"))
		if slices.Contains(strings.Fields(string(ctl)), "cpu") {
			return m.V2, true, nil
		}
	}
	if m.CPU != "" {
		// This process's path in the hierarchy, relative to the mount's
		// root (the mount may itself be a subtree); its root when the
		// file has no cpu line.
		cpu, _, _ := procfs.ProcCgroupPaths([]byte(own), "/proc/self/cgroup")
		rel := strings.TrimPrefix(string(cpu), m.CPURoot)
		return filepath.Join(m.CPU, "/"+strings.TrimPrefix(rel, "/")), false, nil
	}
	return "", false, errors.New("--cpu-quota: no usable cgroup cpu controller (neither cgroup v2 with cpu enabled nor a v1 cpu hierarchy is mounted)")
}

// newCgroup makes a cgroup limited to quota CPUs.
func newCgroup(quota float64) (*cgroup, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("--cpu-quota makes a cgroup, which needs root: run ctxtop as root (sudo)")
	}
	root, v2, err := cgroupRoot()
	if err != nil {
		return nil, err
	}
	sweepStale(root, ownerAlive)
	pid := os.Getpid()
	start, err := startTime(pid)
	if err != nil {
		return nil, fmt.Errorf("--cpu-quota: %w", err)
	}
	cg := &cgroup{dir: filepath.Join(root, poolName(pid, start, time.Now().UnixNano()%1e6)), v2: v2, quota: quota}
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("--cpu-quota: making the cgroup: %w", err)
	}
	q := int64(quota * cfsPeriodUs)
	if v2 {
		err = cg.write("cpu.max", fmt.Sprintf("%d %d", q, cfsPeriodUs))
	} else {
		err = cg.write("cpu.cfs_period_us", strconv.Itoa(cfsPeriodUs))
		if err == nil {
			err = cg.write("cpu.cfs_quota_us", strconv.FormatInt(q, 10))
		}
	}
	if err != nil {
		cg.remove()
		return nil, fmt.Errorf("--cpu-quota: setting the limit: %w", err)
	}
	return cg, nil
}

func (cg *cgroup) write(file, v string) error {
	return os.WriteFile(filepath.Join(cg.dir, file), []byte(v), 0)
}

// add moves process pid, every thread of it, into the cgroup.
func (cg *cgroup) add(pid int) error {
	if err := cg.write("cgroup.procs", strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("--cpu-quota: moving the pool into its cgroup: %w", err)
	}
	return nil
}

// summarize adds the cgroup's throttling figures to s.
func (cg *cgroup) summarize(s *Summary) {
	s.CPUQuota = cg.quota
	b, err := os.ReadFile(filepath.Join(cg.dir, "cpu.stat"))
	if err != nil {
		return
	}
	st := parseCPUStat(b)
	s.CgroupPeriods = st["nr_periods"]
	if p := st["nr_periods"]; p > 0 {
		v := float64(st["nr_throttled"]) / float64(p)
		s.ThrottledShare = &v
	}
	if ns, ok := st["throttled_time"]; ok { // v1: nanoseconds
		s.ThrottledS = float64(ns) / 1e9
	} else {
		s.ThrottledS = float64(st["throttled_usec"]) / 1e6
	}
}

// parseCPUStat reads cpu.stat's "key value" lines.
func parseCPUStat(b []byte) map[string]uint64 {
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out
}

// remove deletes the cgroup once its processes are gone; an exiting
// process can keep it busy for a moment.
func (cg *cgroup) remove() {
	for range 50 {
		if err := os.Remove(cg.dir); err == nil || os.IsNotExist(err) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A pool's cgroup is named poolPrefix + "PID-START-N": the owner's PID and
// start time (clock ticks since boot, /proc/PID/stat field 22), so that a
// later run can tell a group whose owner was killed (SIGKILL leaves no
// chance to remove it) from a live one, and a reused PID from its owner.
// N tells apart the groups of one owner. Releases before the start time
// was added named them "PID-N".
const poolPrefix = "ctxtop-pool-"

func poolName(pid int, start uint64, n int64) string {
	return fmt.Sprintf("%s%d-%d-%d", poolPrefix, pid, start, n)
}

// parsePoolName reads a pool cgroup's owner from its name; hasStart is
// false for the older "PID-N" names. ok is false for any other name.
func parsePoolName(name string) (pid int, start uint64, hasStart, ok bool) {
	rest, found := strings.CutPrefix(name, poolPrefix)
	if !found {
		return 0, 0, false, false
	}
	f := strings.Split(rest, "-")
	var nums [3]uint64
	if len(f) != 2 && len(f) != 3 {
		return 0, 0, false, false
	}
	for i, x := range f {
		n, err := strconv.ParseUint(x, 10, 63)
		if err != nil || x != strconv.FormatUint(n, 10) {
			return 0, 0, false, false
		}
		nums[i] = n
	}
	if nums[0] == 0 || nums[0] > 1<<22 { // PID_MAX_LIMIT
		return 0, 0, false, false
	}
	if len(f) == 3 {
		return int(nums[0]), nums[1], true, true
	}
	return int(nums[0]), 0, false, true
}

// startTime is process pid's start time in clock ticks since boot: its
// main thread's (the process's own stat line gives the same).
func startTime(pid int) (uint64, error) {
	st, err := selfProc.TaskStat(pid, pid)
	return st.StartTime, err
}

// ownerAlive reports whether the process that named a pool cgroup still
// runs: its PID exists and, where the name has it, with the same start
// time. When it cannot tell, it says alive: a group is left, never taken.
func ownerAlive(pid int, start uint64, hasStart bool) bool {
	got, err := startTime(pid)
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	return !hasStart || got == start
}

// sweepStale removes the pool cgroups under root that a killed ctxtop left
// behind: only directories named as ctxtop names them, whose owner is gone
// and which hold no process. rmdir alone, never a recursive removal: the
// kernel refuses to remove a cgroup that still has processes or children,
// which guards the race with a process being moved in.
func sweepStale(root string, alive func(pid int, start uint64, hasStart bool) bool) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, start, hasStart, ok := parsePoolName(e.Name())
		// ReadDir's type comes from lstat: a symlink is not a directory.
		if !ok || !e.IsDir() || alive(pid, start, hasStart) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil || len(bytes.TrimSpace(procs)) != 0 {
			continue
		}
		os.Remove(dir)
	}
}
