package procfs

import (
	"path/filepath"
	"slices"
	"strings"
)

// CgroupMounts reads <root>/self/mountinfo and returns where the cgroup
// hierarchies ctxtop uses are mounted. Each line is
//
//	41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
//	32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
//
// mount ID, parent, device, root within the file system, mount point
// (octal escapes for blanks), options, optional fields up to "-", then the
// file system type, source and super-block options, which for cgroup v1
// list the hierarchy's controllers.
func (fs FS) CgroupMounts() (CgroupFS, error) {
	p := fs.Path("self", "mountinfo")
	b, err := ReadFile(p, LimitStat)
	if err != nil {
		return CgroupFS{}, err
	}
	return ParseCgroupMounts(b, p)
}

// ParseCgroupMounts picks the cgroup2 mount and the v1 mount whose
// controllers include cpu out of a mountinfo file. Lines that are not
// cgroup mounts are not parsed past their type; a cgroup line without its
// fields is malformed.
func ParseCgroupMounts(b []byte, path string) (CgroupFS, error) {
	var c CgroupFS
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		sep := strings.Index(string(line), " - ")
		if sep < 0 {
			continue
		}
		fstype, j := nextField(line, sep+3)
		if string(fstype) != "cgroup2" && string(fstype) != "cgroup" {
			continue
		}
		_, j = nextField(line, j) // source
		opts, _ := nextField(line, j)
		var f [5][]byte
		k := 0
		for n := range f {
			f[n], k = nextField(line, k)
		}
		if len(f[3]) == 0 || len(f[4]) == 0 || f[3][0] != '/' || f[4][0] != '/' {
			return CgroupFS{}, parseErr(path, "cgroup mount")
		}
		root, mnt := unescapeMount(string(f[3])), filepath.Clean(unescapeMount(string(f[4])))
		switch {
		case string(fstype) == "cgroup2" && c.V2 == "":
			c.V2, c.V2Root = mnt, root
		case string(fstype) == "cgroup" && c.CPU == "" && hasController(opts, "cpu"):
			c.CPU, c.CPURoot = mnt, root
		}
	}
	return c, nil
}

// unescapeMount undoes mountinfo's \ooo escapes (space, tab, newline,
// backslash).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			o := s[i+1 : i+4]
			if len(o) == 3 && o[0] >= '0' && o[0] <= '3' && o[1] >= '0' && o[1] <= '7' && o[2] >= '0' && o[2] <= '7' {
				b.WriteByte((o[0]-'0')<<6 | (o[1]-'0')<<3 | (o[2] - '0'))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ProcMount is what a procfs mount's options (the super-block options of
// its mountinfo line) say about which processes it shows:
//
//	42 27 0:39 / /proc rw,relatime - proc proc rw,gid=27,hidepid=invisible
//
// hidepid=noaccess (1) lets users see other users' /proc/PID directories
// but not into them; invisible (2) hides them; ptraceable (4) shows only the
// processes the reader may ptrace. Kernels before 5.8 print the number.
// Members of the gid= group see everything, as does root.
type ProcMount struct {
	// HidePID is "noaccess", "invisible" or "ptraceable"; "" when off.
	HidePID string
	// GID is the gid= option, -1 when there is none.
	GID int
}

// ProcMount reads <root>/self/mountinfo and returns the options of the
// procfs mounted at the root; found is false when the root is no mount
// point there (a fixture tree, a bind of a subdirectory).
func (fs FS) ProcMount() (m ProcMount, found bool, err error) {
	abs, err := filepath.Abs(fs.root)
	if err != nil {
		return ProcMount{GID: -1}, false, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	p := fs.Path("self", "mountinfo")
	b, err := ReadFile(p, LimitStat)
	if err != nil {
		return ProcMount{GID: -1}, false, err
	}
	return ParseProcMount(b, p, abs)
}

// ParseProcMount finds the last proc mount at mountPoint in a mountinfo
// file (the last is the one on top) and reads its options.
func ParseProcMount(b []byte, path, mountPoint string) (m ProcMount, found bool, err error) {
	m.GID = -1
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		sep := strings.Index(string(line), " - ")
		if sep < 0 {
			continue
		}
		fstype, j := nextField(line, sep+3)
		if string(fstype) != "proc" {
			continue
		}
		_, j = nextField(line, j) // source
		opts, _ := nextField(line, j)
		var f [5][]byte
		k := 0
		for n := range f {
			f[n], k = nextField(line, k)
		}
		if len(f[4]) == 0 || f[4][0] != '/' {
			return ProcMount{GID: -1}, false, parseErr(path, "proc mount")
		}
		if filepath.Clean(unescapeMount(string(f[4]))) != mountPoint {
			continue
		}
		cur := ProcMount{GID: -1}
		for o := range strings.SplitSeq(string(opts), ",") {
			key, v, _ := strings.Cut(o, "=")
			switch key {
			case "hidepid":
				switch v {
				case "0", "off":
					cur.HidePID = ""
				case "1", "noaccess":
					cur.HidePID = "noaccess"
				case "2", "invisible":
					cur.HidePID = "invisible"
				case "4", "ptraceable":
					cur.HidePID = "ptraceable"
				default:
					return ProcMount{GID: -1}, false, parseErr(path, "hidepid")
				}
			case "gid":
				g, ok := parseUint([]byte(v))
				if !ok || g > 1<<32-1 {
					return ProcMount{GID: -1}, false, parseErr(path, "gid")
				}
				cur.GID = int(g)
			}
		}
		m, found = cur, true
	}
	return m, found, nil
}

// HidesFrom reports whether the mount hides other users' processes from a
// reader with effective uid euid in groups (its effective and supplementary
// groups). Root is taken as able to ptrace anything (CAP_SYS_PTRACE).
func (m ProcMount) HidesFrom(euid int, groups []int) bool {
	if m.HidePID == "" || euid == 0 {
		return false
	}
	return m.GID < 0 || !slices.Contains(groups, m.GID)
}
