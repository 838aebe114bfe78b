package sampler

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// A monitor run as a node agent (a DaemonSet's container) is usually in a
// cgroup namespace of its own: the kernel then names every other process's
// cgroup relative to the agent's, "/../../kubepods.slice/..." for a pod
// beside it, "/../../../system.slice/nginx.service" for a host service.
// nsRoots finds where the namespace's root is in the host's hierarchies, so
// that every path can be made the host's own, the one the host's cgroup
// file system, a recording made on the host and cAdvisor all use.
//
// The kernel shows how deep the root is: host PID 1 (the agent runs with
// hostPID) is at the top of the hierarchy or one level down
// (/init.scope), so its path starts with one ".." per level. Which
// group at that depth is the root is found in the host's cgroup file
// system, when one is mounted here at its own root: the one whose subtree
// holds this process where /proc/self/cgroup puts it.
type nsRoots struct {
	// v1 and v2 are the roots in the cpu hierarchy and the unified one:
	// "/" when not in a namespace, or "" when in one whose root was not
	// found (then a path's ".." steps are dropped, which keeps its last
	// elements, those that name a pod and a container).
	v1, v2 string
}

func findNSRoots(fs procfs.FS, cg procfs.CgroupFS) nsRoots {
	r := nsRoots{v1: "/", v2: "/"}
	init, err := procfs.ReadFile(fs.Path("1", "cgroup"), procfs.LimitStatus)
	if err != nil {
		return r
	}
	i1, i2, err := procfs.ProcCgroupPaths(init, "cgroup")
	if err != nil {
		return r
	}
	self, err := procfs.ReadFile(fs.Path("self", "cgroup"), procfs.LimitStatus)
	if err != nil {
		return r
	}
	s1, s2, err := procfs.ProcCgroupPaths(self, "cgroup")
	if err != nil {
		return r
	}
	if d := upSteps(i1); d > 0 {
		r.v1 = ""
		if cg.CPURoot == "/" {
			r.v1 = findRoot(cg.CPU, d, string(s1))
		}
	}
	if d := upSteps(i2); d > 0 {
		r.v2 = ""
		if cg.V2Root == "/" {
			r.v2 = findRoot(cg.V2, d, string(s2))
		}
	}
	return r
}

// upSteps counts the leading ".." elements of a cgroup path.
func upSteps(p []byte) int {
	n := 0
	for bytes.HasPrefix(p, []byte("/..")) && (len(p) == 3 || p[3] == '/') {
		n++
		p = p[3:]
	}
	return n
}

// maxRootSearch bounds the groups looked at to find the namespace's root.
const maxRootSearch = 1 << 16

// findRoot returns the group at depth under mount whose subtree has this
// process at self (its path as its own namespace names it), "" if none.
func findRoot(mount string, depth int, self string) string {
	if mount == "" || !strings.HasPrefix(self, "/") || strings.Contains(self, "/..") {
		return ""
	}
	pid := []byte(strconv.Itoa(os.Getpid()))
	seen := 0
	var walk func(dir string, d int) string
	walk = func(dir string, d int) string {
		if d == depth {
			b, err := os.ReadFile(filepath.Join(mount, dir, self, "cgroup.procs"))
			if err == nil && hasLine(b, pid) {
				return dir
			}
			return ""
		}
		ents, err := os.ReadDir(filepath.Join(mount, dir))
		if err != nil {
			return ""
		}
		for _, e := range ents {
			if seen++; seen > maxRootSearch {
				return ""
			}
			if e.IsDir() {
				if r := walk(path.Join(dir, e.Name()), d+1); r != "" {
					return r
				}
			}
		}
		return ""
	}
	return walk("/", 0)
}

func hasLine(b, line []byte) bool {
	for len(b) > 0 {
		l, rest, _ := bytes.Cut(b, []byte("\n"))
		if bytes.Equal(l, line) {
			return true
		}
		b = rest
	}
	return false
}

// hostPath makes a path the kernel gave relative to a namespace's root
// the host's own. root "" is a namespace whose root is unknown: the ".."
// steps are dropped, and a path below the root stays as it is.
func hostPath(p string, root string) string {
	if root == "/" || root == "" && !strings.HasPrefix(p, "/..") {
		return p
	}
	if root == "" {
		root = "/"
	}
	return path.Join(root, p)
}
