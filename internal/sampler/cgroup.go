package sampler

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/containers"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// A process rarely changes cgroup (a container's exec, systemd-run moving a
// scope), so /proc/PID/cgroup is read when the process is first seen and
// then every cgroupRereadPasses passes in which it ran; a bandwidth limit is
// re-read every limitRereadPasses passes. cpu.stat is read every pass, but
// only for groups with a quota: without one nothing is ever throttled.
const (
	cgroupRereadPasses = 16
	limitRereadPasses  = 16
)

// cgroups is the sampler's memory of the cgroups its processes are in.
type cgroups struct {
	fs procfs.CgroupFS
	// ns is where this process's cgroup namespace is rooted (cgroupns.go).
	ns nsRoots
	// ctrs names what runs in each group; nil when not asked for.
	ctrs *containers.Resolver
	// byPath holds every group seen in the last pass.
	byPath map[string]*cgroupState
	pass   uint64
	paths  []cgroupKey
	buf    []byte
}

type cgroupKey struct {
	path string
	v1   bool
	st   *cgroupState
}

type cgroupState struct {
	dir string
	// statPath is dir/cpu.stat, NUL-terminated for the raw open.
	statPath []byte
	// dirOK is false when the group has no directory here (not mounted,
	// or a path we refuse to join).
	dirOK    bool
	limit    procfs.CPULimit
	limitOK  bool
	limitAge uint8
	seen     uint64
	// ctr is what runs in the group, nil for none; ctrAge counts the
	// passes until a group whose names are not all known yet is resolved
	// again (the kubelet writes a pod's files just after its cgroup).
	ctr     *model.Container
	ctrAge  uint8
	ctrDone bool
}

func newCgroups(fs procfs.FS, root string, ctrs *containers.Resolver) cgroups {
	c := cgroups{byPath: map[string]*cgroupState{}, buf: make([]byte, 1024), ctrs: ctrs}
	switch {
	case root != "":
		c.fs = procfs.ProbeCgroupRoot(root)
	case sameNamespace(fs):
		// Mount points in mountinfo are in this process's mount namespace
		// only when the procfs is its own.
		c.fs, _ = fs.CgroupMounts()
	}
	c.ns = findNSRoots(fs, c.fs)
	return c
}

// processCgroup refreshes p's cgroup when it is due. A process whose file
// cannot be read (gone, not permitted, a fixture without one) has none.
func (s *Sampler) processCgroup(p *proc) {
	if p.cgroupAge > 0 {
		p.cgroupAge--
		return
	}
	p.cgroupAge = cgroupRereadPasses
	s.path = append(appendInt(s.path[:0], p.pid), "/cgroup\x00"...)
	n, err := readFileAt(s.rootFD, s.path, &s.buf, procfs.LimitStatus)
	if err != nil {
		p.cgroup, p.cgroupRaw, p.cgroupV1 = "", "", false
		return
	}
	path, v1, err := procfs.ParseProcCgroupPath(s.buf[:n], "cgroup")
	if err != nil {
		p.cgroup, p.cgroupRaw, p.cgroupV1 = "", "", false
		return
	}
	if string(path) != p.cgroupRaw {
		// Root may name a group anything but '/' and newline, escape
		// sequences included. Cleaned here, where the name enters, so the
		// sample (and so live output, the exporter and a recording) holds
		// the one cleaned path; the raw one only finds the directory.
		p.cgroupRaw = string(path)
		root := s.cg.ns.v2
		if v1 {
			root = s.cg.ns.v1
		}
		p.cgroup = sanitize.Name(hostPath(p.cgroupRaw, root))
	}
	p.cgroupV1 = v1
}

// readCgroups fills dst.Cgroups with every cgroup a process is in. Groups
// are keyed by their cleaned path: two whose raw names clean up alike are
// one row, read from the directory of the first process seen in them.
func (s *Sampler) readCgroups(dst *model.Sample) {
	c := &s.cg
	c.pass++
	c.paths = c.paths[:0]
	// Many processes share a group: each group is taken once, from the
	// first of them.
	for _, p := range s.procs {
		if p.cgroup == "" {
			continue
		}
		st := c.byPath[p.cgroup]
		if st == nil {
			st = &cgroupState{}
			root := c.ns.v2
			if p.cgroupV1 {
				root = c.ns.v1
			}
			if dir, err := c.fs.Dir(hostPath(p.cgroupRaw, root), p.cgroupV1); err == nil {
				st.dir, st.dirOK = dir, true
				st.statPath = cstr(nil, filepath.Join(dir, "cpu.stat"))
			}
			c.byPath[p.cgroup] = st
		} else if st.seen == c.pass {
			continue
		}
		st.seen = c.pass
		c.resolve(p.cgroup, st)
		c.paths = append(c.paths, cgroupKey{p.cgroup, p.cgroupV1, st})
	}
	slices.SortFunc(c.paths, func(a, b cgroupKey) int { return strings.Compare(a.path, b.path) })
	dst.Cgroups = dst.Cgroups[:0]
	for _, k := range c.paths {
		cc := model.CgroupCounters{Path: k.path, Container: k.st.ctr}
		if k.st.dirOK {
			c.readCounters(k.st, k.v1, &cc)
		}
		dst.Cgroups = append(dst.Cgroups, cc)
	}
	for p, st := range c.byPath {
		if st.seen != c.pass {
			delete(c.byPath, p)
		}
	}
}

// resolve names what runs in the group when it is new, and again every
// cgroupRereadPasses passes while some of its names are missing.
func (c *cgroups) resolve(path string, st *cgroupState) {
	if c.ctrs == nil {
		return
	}
	if st.ctrDone {
		return
	}
	if st.ctrAge > 0 {
		st.ctrAge--
		return
	}
	st.ctr = c.ctrs.Resolve(path)
	st.ctrDone, st.ctrAge = containers.Complete(st.ctr), cgroupRereadPasses
}

// readCounters reads one group's limit (when due) and, when it has a quota,
// its cpu.stat. A group that vanished or cannot be read has no figures.
func (c *cgroups) readCounters(st *cgroupState, v1 bool, cc *model.CgroupCounters) {
	if st.limitAge == 0 {
		st.limit, st.limitOK = procfs.CPULimit{}, false
		l, err := c.fs.CPULimit(st.dir, v1)
		switch {
		case err == nil:
			st.limit, st.limitOK = l, true
		case errors.Is(err, fs.ErrNotExist) && dirExists(st.dir):
			// No cpu.max in a v2 group whose parent did not enable the cpu
			// controller (or the root): it cannot have a quota.
			st.limit, st.limitOK = procfs.CPULimit{QuotaUs: -1}, true
		}
		st.limitAge = limitRereadPasses
	}
	st.limitAge--
	if !st.limitOK {
		return
	}
	cc.LimitCPUs = st.limit.CPUs()
	if st.limit.QuotaUs < 0 {
		// No quota: never throttled, known without reading cpu.stat.
		cc.HasThrottling = true
		return
	}
	// Read every pass: raw, into a kept buffer, so a steady state
	// allocates nothing, and bounded as every procfs read is.
	n, err := readFileAt(unix.AT_FDCWD, st.statPath, &c.buf, procfs.LimitLine)
	if err != nil {
		return
	}
	stat, err := procfs.ParseCgroupCPUStat(c.buf[:n], "cpu.stat")
	if err != nil || !stat.HasThrottling {
		return
	}
	cc.HasThrottling = true
	cc.Periods, cc.Throttled, cc.ThrottledNs = stat.Periods, stat.Throttled, stat.ThrottledNs
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
