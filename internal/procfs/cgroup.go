package procfs

import (
	"strconv"
	"strings"
)

// ProcCgroup is what ctxtop takes from /proc/PID/cgroup, one line per
// hierarchy, "ID:controllers:path":
//
//	0::/system.slice/nginx.service                       cgroup v2 (unified)
//	4:cpu,cpuacct:/kubepods/burstable/pod1d2e.../c0ffee  cgroup v1, one per hierarchy
//	1:name=systemd:/user.slice/user-1000.slice           v1 named hierarchy
//
// A hybrid host (systemd's default for years) has both: v1 hierarchies for
// the controllers and a v2 line for the unified tree, often with the cpu
// controller on v1. Paths are relative to the reader's cgroup namespace
// root and may themselves hold ':'.
type ProcCgroup struct {
	// V2 is the unified hierarchy's path (the "0::" line).
	V2    string
	HasV2 bool
	// CPU is the path in the v1 hierarchy that holds the cpu controller.
	CPU    string
	HasCPU bool
}

// Path is the cgroup ctxtop groups a process by: the v1 cpu controller's
// path where one is mounted and not the root (CPU throttling is counted
// there), else the v2 path, else whatever there is.
func (c ProcCgroup) Path() (path string, v1 bool) {
	switch {
	case c.HasCPU && c.CPU != "/":
		return c.CPU, true
	case c.HasV2:
		return c.V2, false
	case c.HasCPU:
		return c.CPU, true
	}
	return "", false
}

// ProcCgroup reads <root>/PID/cgroup.
func (fs FS) ProcCgroup(pid int) (ProcCgroup, error) {
	p := fs.Path(strconv.Itoa(pid), "cgroup")
	b, err := readSmall(p)
	if err != nil {
		return ProcCgroup{}, err
	}
	return ParseProcCgroup(b, p)
}

// ParseProcCgroup parses a cgroup file. Every line must have the three
// fields and a path starting with '/'; a file with no line is malformed.
func ParseProcCgroup(b []byte, path string) (ProcCgroup, error) {
	var c ProcCgroup
	lines := 0
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		if len(line) == 0 {
			continue
		}
		lines++
		c1 := indexByte(line, ':')
		if c1 < 0 {
			return ProcCgroup{}, parseErr(path, "cgroup line")
		}
		c2 := indexByte(line[c1+1:], ':')
		if c2 < 0 {
			return ProcCgroup{}, parseErr(path, "cgroup line")
		}
		c2 += c1 + 1
		id, ok := parseUint(line[:c1])
		ctl, p := line[c1+1:c2], line[c2+1:]
		if !ok || len(p) == 0 || p[0] != '/' {
			return ProcCgroup{}, parseErr(path, "cgroup line")
		}
		switch {
		case id == 0 && len(ctl) == 0:
			c.V2, c.HasV2 = string(p), true
		case hasController(ctl, "cpu"):
			c.CPU, c.HasCPU = string(p), true
		}
	}
	if lines == 0 {
		return ProcCgroup{}, parseErr(path, "cgroup")
	}
	return c, nil
}

// hasController reports whether the comma-separated list holds name.
func hasController(list []byte, name string) bool {
	for _, f := range strings.Split(string(list), ",") {
		if f == name {
			return true
		}
	}
	return false
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
