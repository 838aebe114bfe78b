package procfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// CgroupCPUStat is a cgroup's cpu.stat. cgroup v2:
//
//	usage_usec 8134225
//	user_usec 6551081
//	system_usec 1583144
//	nr_periods 412
//	nr_throttled 187
//	throttled_usec 9329411
//
// (the last three only where the cpu controller is enabled). cgroup v1's cpu
// controller:
//
//	nr_periods 412
//	nr_throttled 187
//	throttled_time 9329411000     (nanoseconds)
//
// A period is one CFS bandwidth period (cpu.max's second field, 100 ms by
// default) in which the group had runnable threads; throttled ones are those
// in which it ran out of quota and its threads were taken off the CPUs.
type CgroupCPUStat struct {
	Periods     uint64
	Throttled   uint64
	ThrottledNs uint64
	// HasThrottling is false when the file has no nr_periods line: v2
	// without the cpu controller enabled for the group.
	HasThrottling bool
}

// ParseCgroupCPUStat parses either version's cpu.stat. Unknown keys are
// skipped, as the kernel adds new ones (nr_bursts, burst_usec, ...).
func ParseCgroupCPUStat(b []byte, path string) (CgroupCPUStat, error) {
	var s CgroupCPUStat
	var usage uint64
	known := 0
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		key, j := nextField(line, 0)
		val, _ := nextField(line, j)
		var dst *uint64
		mul := uint64(1)
		switch string(key) {
		case "usage_usec":
			dst = &usage
		case "nr_periods":
			dst, s.HasThrottling = &s.Periods, true
		case "nr_throttled":
			dst = &s.Throttled
		case "throttled_usec":
			dst, mul = &s.ThrottledNs, 1000
		case "throttled_time":
			dst = &s.ThrottledNs
		default:
			continue
		}
		v, ok := parseUint(val)
		if !ok || v > ^uint64(0)/mul {
			return CgroupCPUStat{}, parseErr(path, string(key))
		}
		*dst = v * mul
		known++
	}
	if known == 0 {
		return CgroupCPUStat{}, parseErr(path, "cpu.stat")
	}
	return s, nil
}

// CPULimit is a cgroup's CPU bandwidth limit: Quota µs of CPU time per
// Period µs, so Quota/Period CPUs. Quota < 0 means no limit.
type CPULimit struct {
	QuotaUs  int64
	PeriodUs int64
}

// CPUs is the limit in CPUs, 0 when unlimited.
func (l CPULimit) CPUs() float64 {
	if l.QuotaUs < 0 || l.PeriodUs <= 0 {
		return 0
	}
	return float64(l.QuotaUs) / float64(l.PeriodUs)
}

// ParseCPUMax parses cgroup v2's cpu.max, "max 100000" or "50000 100000".
func ParseCPUMax(b []byte, path string) (CPULimit, error) {
	q, i := nextField(b, 0)
	p, _ := nextField(b, i)
	period, ok := parseUint(p)
	if !ok || period == 0 || period > 1<<40 {
		return CPULimit{}, parseErr(path, "cpu.max period")
	}
	l := CPULimit{QuotaUs: -1, PeriodUs: int64(period)}
	if string(q) != "max" {
		v, ok := parseUint(q)
		if !ok || v > 1<<40 {
			return CPULimit{}, parseErr(path, "cpu.max quota")
		}
		l.QuotaUs = int64(v)
	}
	return l, nil
}

// ParseCFSValue parses cgroup v1's cpu.cfs_quota_us or cpu.cfs_period_us:
// one decimal, -1 for no quota.
func ParseCFSValue(b []byte, path string) (int64, error) {
	f, _ := nextField(b, 0)
	if string(f) == "-1" {
		return -1, nil
	}
	v, ok := parseUint(f)
	if !ok || v > 1<<40 {
		return 0, parseErr(path, "cfs value")
	}
	return int64(v), nil
}

// CgroupFS locates cgroup directories: the v2 (unified) mount and the v1
// hierarchy holding the cpu controller, either of which may be missing (a
// fixture tree, a container without cgroupfs).
type CgroupFS struct {
	// V2 and CPU are mount points; empty when not mounted.
	V2, CPU string
	// V2Root and CPURoot are the mounts' roots within their hierarchy
	// (mountinfo field 4): "/" unless a subtree was bind-mounted.
	V2Root, CPURoot string
}

// ErrNoCgroup means the cgroup's directory is not reachable here.
var ErrNoCgroup = errors.New("cgroup not mounted")

// Dir is the directory of the cgroup at path (as /proc/PID/cgroup names
// it) in the v1 cpu hierarchy or in the unified one. A path with ".." in
// it, or outside the mount's root, has none.
func (c CgroupFS) Dir(path string, v1 bool) (string, error) {
	mount, root := c.V2, c.V2Root
	if v1 {
		mount, root = c.CPU, c.CPURoot
	}
	if mount == "" || !strings.HasPrefix(path, "/") {
		return "", ErrNoCgroup
	}
	for _, e := range strings.Split(path, "/") {
		if e == ".." {
			return "", ErrNoCgroup
		}
	}
	if root != "" && root != "/" {
		if path != root && !strings.HasPrefix(path, root+"/") {
			return "", ErrNoCgroup
		}
		path = path[len(root):]
	}
	return filepath.Join(mount, path), nil
}

// CPULimit reads dir's bandwidth limit: cpu.max on v2, cpu.cfs_quota_us
// and cpu.cfs_period_us on v1.
func (c CgroupFS) CPULimit(dir string, v1 bool) (CPULimit, error) {
	if !v1 {
		p := filepath.Join(dir, "cpu.max")
		b, err := ReadFile(p, LimitLine)
		if err != nil {
			return CPULimit{}, err
		}
		return ParseCPUMax(b, p)
	}
	var l CPULimit
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"cpu.cfs_quota_us", &l.QuotaUs}, {"cpu.cfs_period_us", &l.PeriodUs}} {
		p := filepath.Join(dir, f.name)
		b, err := ReadFile(p, LimitLine)
		if err != nil {
			return CPULimit{}, err
		}
		if *f.dst, err = ParseCFSValue(b, p); err != nil {
			return CPULimit{}, err
		}
	}
	return l, nil
}

// ProbeCgroupRoot finds the hierarchies under dir laid out as
// /sys/fs/cgroup is: unified at dir itself (v2 only) or at dir/unified
// (hybrid), the cpu controller at dir/cpu or dir/cpu,cpuacct (v1).
func ProbeCgroupRoot(dir string) CgroupFS {
	var c CgroupFS
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	switch {
	case exists(filepath.Join(dir, "cgroup.controllers")):
		c.V2 = dir
	case exists(filepath.Join(dir, "unified", "cgroup.controllers")):
		c.V2 = filepath.Join(dir, "unified")
	}
	for _, name := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
		if d := filepath.Join(dir, name); exists(filepath.Join(d, "cpu.cfs_quota_us")) {
			c.CPU = d
			break
		}
	}
	c.V2Root, c.CPURoot = "/", "/"
	return c
}
