package procfs

import "bytes"

// ParseProcCgroupPath returns the cgroup ctxtop groups a process by, from
// the contents of /proc/PID/cgroup, one line per hierarchy,
// "ID:controllers:path":
//
//	0::/system.slice/nginx.service                       cgroup v2 (unified)
//	4:cpu,cpuacct:/kubepods/burstable/pod1d2e.../c0ffee  cgroup v1, one per hierarchy
//	1:name=systemd:/user.slice/user-1000.slice           v1 named hierarchy
//
// A hybrid host (systemd's default for years) has both: v1 hierarchies for
// the controllers and a v2 line for the unified tree, often with the cpu
// controller on v1. Paths are relative to the reader's cgroup namespace
// root and may themselves hold ':'.
//
// The group is the v1 cpu controller's path where one is mounted and not
// the root (CPU throttling is counted there), else the v2 path, else
// whatever there is; v1 says which hierarchy it is in. Every line must have
// the three fields and a path starting with '/'; a file with no line is
// malformed. The path is a slice of b, so the sampler, which calls this for
// every process, allocates nothing.
func ParseProcCgroupPath(b []byte, path string) (p []byte, v1 bool, err error) {
	var v2Path, cpuPath []byte
	var hasV2, hasCPU bool
	err = scanProcCgroup(b, path, func(v2 bool, p []byte) {
		if v2 {
			v2Path, hasV2 = p, true
		} else {
			cpuPath, hasCPU = p, true
		}
	})
	switch {
	case err != nil:
		return nil, false, err
	case hasCPU && string(cpuPath) != "/":
		return cpuPath, true, nil
	case hasV2:
		return v2Path, false, nil
	case hasCPU:
		return cpuPath, true, nil
	}
	return nil, false, nil
}

// scanProcCgroup calls found for the unified line (v2 true) and for the v1
// line whose controllers include cpu.
func scanProcCgroup(b []byte, path string, found func(v2 bool, p []byte)) error {
	lines := 0
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		if len(line) == 0 {
			continue
		}
		lines++
		c1 := bytes.IndexByte(line, ':')
		if c1 < 0 {
			return parseErr(path, "cgroup line")
		}
		c2 := bytes.IndexByte(line[c1+1:], ':')
		if c2 < 0 {
			return parseErr(path, "cgroup line")
		}
		c2 += c1 + 1
		id, ok := parseUint(line[:c1])
		ctl, p := line[c1+1:c2], line[c2+1:]
		if !ok || len(p) == 0 || p[0] != '/' {
			return parseErr(path, "cgroup line")
		}
		switch {
		case id == 0 && len(ctl) == 0:
			found(true, p)
		case hasController(ctl, "cpu"):
			found(false, p)
		}
	}
	if lines == 0 {
		return parseErr(path, "cgroup")
	}
	return nil
}

// hasController reports whether the comma-separated list holds name.
func hasController(list []byte, name string) bool {
	for len(list) > 0 {
		i := bytes.IndexByte(list, ',')
		if i < 0 {
			return string(list) == name
		}
		if string(list[:i]) == name {
			return true
		}
		list = list[i+1:]
	}
	return false
}

// ProcCgroupPaths returns both paths of /proc/PID/cgroup that
// ParseProcCgroupPath chooses from: the v1 cpu controller's and the
// unified one's, each nil when the file has no such line.
func ProcCgroupPaths(b []byte, path string) (cpu, v2 []byte, err error) {
	err = scanProcCgroup(b, path, func(isV2 bool, p []byte) {
		if isV2 {
			v2 = p
		} else {
			cpu = p
		}
	})
	return cpu, v2, err
}
