package model

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ctxtop/ctxtop/internal/sorts"
)

// ThrottledHot is the share of CFS periods throttled, in percent, at which
// a cgroup is hot with reason "throttled", and its threads that are mostly
// preempted say "preempted (cgroup throttled N%)".
const ThrottledHot = 20

// cgroupRates fills dst (length 0, reused capacity) with one row per cgroup
// of cur.Cgroups that has a thread that moved, or was throttled; threads
// (in PID, TID order, not yet sorted) get the throttled reason. x is
// cur.Cgroups' index, with every task of cur counted (cgroupIndex.count).
func cgroupRates(dst []CgroupRates, x *cgroupIndex, prev, cur *Sample, threads []ThreadRates, secs, hot float64) []CgroupRates {
	if len(cur.Cgroups) == 0 {
		return dst
	}
	// Threads are in PID order, so a process's cgroup is looked up once,
	// not per thread.
	valid := false
	find := func(path string, last *string, idx *int) int {
		if valid && path == *last {
			return *idx
		}
		valid = true
		*last, *idx = path, x.find(cur.Cgroups, path)
		return *idx
	}
	// Rows are made only for the groups that can have one: those with a
	// thread that moved, or throttling counters in both samples. A host
	// of hundreds of cgroups, most of them idle, built and dropped a row
	// for each every interval. row[k] is cur.Cgroups[k]'s row, -1 for
	// none, -2 for one to make; rows are made in cur.Cgroups' order.
	row := slices.Grow(x.row[:0], len(cur.Cgroups))[:len(cur.Cgroups)]
	for k := range row {
		row[k] = -1
	}
	last, idx := "", -1
	for j := range threads {
		if k := find(threads[j].Cgroup, &last, &idx); k >= 0 {
			row[k] = -2
		}
	}
	// Throttling: a merge-join of both samples' cgroups on path; pairs
	// holds (k in cur, its place in prev) for each group it has figures for.
	pairs := x.pairs[:0]
	pi := 0
	for k := range cur.Cgroups {
		c := &cur.Cgroups[k]
		for pi < len(prev.Cgroups) && prev.Cgroups[pi].Path < c.Path {
			pi++
		}
		if pi >= len(prev.Cgroups) || prev.Cgroups[pi].Path != c.Path {
			continue
		}
		p := &prev.Cgroups[pi]
		if !c.HasThrottling || !p.HasThrottling || c.Periods < p.Periods || c.Throttled < p.Throttled || c.ThrottledNs < p.ThrottledNs {
			continue // unknown, or the group was made anew under the same name
		}
		pairs = append(pairs, [2]int32{int32(k), int32(pi)})
		row[k] = -2
	}
	at := x.rowAt[:0]
	for k := range row {
		if row[k] == -2 {
			row[k] = int32(len(dst))
			at = append(at, int32(k))
			dst = append(dst, CgroupRates{Path: cur.Cgroups[k].Path, LimitCPUs: cur.Cgroups[k].LimitCPUs, Container: cur.Cgroups[k].Container,
				Threads: x.counts[k].threads, Processes: x.counts[k].processes})
		}
	}
	x.row, x.pairs, x.rowAt = row, pairs, at
	valid = false
	for j := range threads {
		t := &threads[j]
		k := find(t.Cgroup, &last, &idx)
		if k < 0 {
			continue
		}
		r := &dst[row[k]]
		r.VoluntaryPerSec += t.VoluntaryPerSec
		r.InvoluntaryPerSec += t.InvoluntaryPerSec
		r.CPUPercent += t.CPUPercent
	}
	throttled := false
	for _, kp := range pairs {
		c, p := &cur.Cgroups[kp[0]], &prev.Cgroups[kp[1]]
		r := &dst[row[kp[0]]]
		r.HasThrottling = true
		if n := c.Periods - p.Periods; n > 0 {
			r.ThrottledPercent = min(float64(c.Throttled-p.Throttled)/float64(n)*100, 100)
		}
		r.ThrottledMsPerSec = float64(c.ThrottledNs-p.ThrottledNs) / 1e6 / secs
		throttled = throttled || r.ThrottledPercent >= ThrottledHot
	}
	for k := range dst {
		r := &dst[k]
		switch {
		case r.HasThrottling && r.ThrottledPercent >= ThrottledHot:
			r.Hot, r.Why = true, Why{Kind: Throttled, Throttled: uint8(pct(r.ThrottledPercent))}
		case r.TotalPerSec() >= hot:
			r.Hot = true
			r.Why = Why{Kind: Blocking}
			if r.InvoluntaryPerSec > r.VoluntaryPerSec {
				r.Why.Kind = Preempted
			}
		}
	}
	if throttled {
		valid = false
		for j := range threads {
			t := &threads[j]
			k := find(t.Cgroup, &last, &idx)
			if k < 0 {
				continue
			}
			k = int(row[k])
			if !dst[k].Hot || !dst[k].HasThrottling || dst[k].ThrottledPercent < ThrottledHot {
				continue
			}
			// A throttled group's threads are taken off the CPU at the end
			// of each period: whatever their rate, that is the trouble.
			if t.InvoluntaryPerSec > 0 && t.InvoluntaryPerSec >= t.VoluntaryPerSec {
				t.Hot = true
				t.Why = Why{Kind: Preempted, HasWait: t.Why.HasWait, Wait: t.Why.Wait, Throttled: uint8(pct(dst[k].ThrottledPercent)), InThrottled: true}
			}
		}
	}
	out := dst[:0]
	for k, r := range dst {
		if r.TotalPerSec() == 0 && r.CPUPercent == 0 && r.ThrottledPercent == 0 {
			continue
		}
		r.Name = x.name(cur.Cgroups, int(at[k]))
		if r.Container != nil {
			r.Name = r.Container.Title
		}
		out = append(out, r)
	}
	sorts.Func(out, func(a, b CgroupRates) int {
		if a.ThrottledPercent != b.ThrottledPercent {
			if a.ThrottledPercent > b.ThrottledPercent {
				return -1
			}
			return 1
		}
		if c := byRate(a.TotalPerSec(), b.TotalPerSec(), a.CPUPercent, b.CPUPercent, 0, 0, 0, 0); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out
}

// cgroupIndex finds paths in a sample's Cgroups, and names them, for one
// list of paths; it is kept (pooled) for the next interval, whose list is
// the same unless a cgroup came or went. A host of hundreds of cgroups
// took a binary search per process per interval, each comparison over the
// long prefixes cgroup paths share (/kubepods.slice/kubepods-...), and
// split each busy cgroup's path again to name it.
type cgroupIndex struct {
	paths []string
	at    map[string]int
	// names[k] is CgroupName of paths[k], "" until asked for.
	names []string
	// counts[k] is how many threads and processes of the interval's
	// sample are in the k-th cgroup; last, lastAt and lastPID are where
	// count left off, counting once it has begun.
	counts []cgroupCount
	// row, rowAt and pairs are cgroupRates' scratch, kept between
	// intervals.
	row, rowAt []int32
	pairs      [][2]int32
	// seq is the Seq of the sample whose tasks counts holds, 0 when
	// none: a sample with the same tasks in the same cgroups has the
	// same counts.
	seq      uint64
	last     string
	lastAt   int
	lastPID  int
	counting bool
}

type cgroupCount struct{ threads, processes int }

// count adds task c of the sample whose cgroups are cgs, the list x was
// made for, to its cgroup's threads, and to its processes when c is the
// first of its process there. The tasks come in PID order, so a process's
// cgroup is looked up once, not per thread.
func (x *cgroupIndex) count(cgs []CgroupCounters, c *TaskCounters) {
	if !x.counting || c.Cgroup != x.last {
		x.lookUp(cgs, c.Cgroup)
	}
	if x.lastAt >= 0 {
		n := &x.counts[x.lastAt]
		n.threads++
		if c.PID != x.lastPID {
			n.processes++
			x.lastPID = c.PID
		}
	}
}

// lookUp is count's look-up, kept apart so that count is inlined into
// the loop over every task.
//
//go:noinline
func (x *cgroupIndex) lookUp(cgs []CgroupCounters, path string) {
	x.counting, x.last, x.lastAt = true, path, x.find(cgs, path)
}

// cgroupIndexFrom is how many cgroups a list has for a map to find them:
// a binary search over fewer is as quick.
const cgroupIndexFrom = 32

var cgroupIndexes = sync.Pool{New: func() any { return &cgroupIndex{at: map[string]int{}} }}

// cgroupIndexFor is a pooled index for cgs, made anew only when cgs holds
// other paths than the one it was made for, with nothing counted; the
// caller puts it back.
func cgroupIndexFor(cgs []CgroupCounters) *cgroupIndex {
	x := cgroupIndexes.Get().(*cgroupIndex)
	same := len(x.paths) == len(cgs)
	for i := 0; same && i < len(cgs); i++ {
		same = x.paths[i] == cgs[i].Path
	}
	if same {
		return x
	}
	clear(x.at)
	x.seq = 0
	x.counts = slices.Grow(x.counts[:0], len(cgs))[:len(cgs)]
	x.paths, x.names = x.paths[:0], x.names[:0]
	for i := range cgs {
		p := cgs[i].Path
		x.paths = append(x.paths, p)
		x.names = append(x.names, "")
		if _, dup := x.at[p]; !dup && len(cgs) >= cgroupIndexFrom {
			x.at[p] = i
		}
	}
	return x
}

// startCount clears the counts for a sample's tasks to be counted.
func (x *cgroupIndex) startCount() {
	clear(x.counts)
	x.last, x.lastAt, x.lastPID, x.counting = "", -1, -1, false
}

// countedFrom reports whether the counts, made for prev, hold for cur,
// which holds prev's tasks (sameTasks): so when none of the tasks that
// moved changed its cgroup.
func (x *cgroupIndex) countedFrom(prev, cur *Sample) bool {
	if x.seq == 0 || x.seq != prev.Seq {
		return false
	}
	for _, j := range cur.Moved {
		if cur.Tasks[j].Cgroup != prev.Tasks[j].Cgroup {
			return false
		}
	}
	return true
}

// find is path's place in cgs, the list x was made for, or -1.
func (x *cgroupIndex) find(cgs []CgroupCounters, path string) int {
	if len(cgs) >= cgroupIndexFrom {
		if i, ok := x.at[path]; ok {
			return i
		}
		return -1
	}
	i, ok := slices.BinarySearchFunc(cgs, path, func(c CgroupCounters, p string) int { return strings.Compare(c.Path, p) })
	if !ok {
		return -1
	}
	return i
}

// name is CgroupName of cgs[k], the list x was made for.
func (x *cgroupIndex) name(cgs []CgroupCounters, k int) string {
	if x.names[k] == "" {
		x.names[k] = CgroupName(cgs[k].Path)
	}
	return x.names[k]
}

func pct(v float64) int { return min(max(int(v+0.5), 0), 100) }

// throttledReasons and preemptedThrottled are built once, so a tick formats
// no string for them.
var throttledReasons, preemptedThrottled = func() (a, b [101]string) {
	for i := range a {
		a[i] = fmt.Sprintf("throttled %d%%", i)
		b[i] = fmt.Sprintf("preempted (cgroup throttled %d%%)", i)
	}
	return a, b
}()

// CgroupName names a cgroup path the way its users do:
//
//	/system.slice/nginx.service                         nginx.service
//	/user.slice/user-1000.slice/user@1000.service/...   the deepest unit: app.scope
//	/docker/3f1c...  or  /system.slice/docker-3f1c....scope   docker 3f1c2b4d5e6f
//	/kubepods/burstable/pod1d2e.../3f1c...              pod 1d2e... (burstable) 3f1c2b4d5e6f
//	/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1d2e_....slice/cri-containerd-3f1c....scope
//
// Anything else is the path itself. The path comes in clean (the sampler
// cleans it where it reads it, a recording's reader where it decodes it),
// and the name is made of its pieces, so it is safe to print as it is.
func CgroupName(path string) string {
	if path == "" || path == "/" {
		return path
	}
	elems := strings.Split(strings.Trim(path, "/"), "/")
	if n := kubeName(elems); n != "" {
		return n
	}
	for i := len(elems) - 1; i >= 0; i-- {
		if kind, id := containerID(elems[i]); id != "" {
			if kind == "container" && i > 0 && elems[i-1] == "docker" {
				kind = "docker"
			}
			return kind + " " + id
		}
	}
	for _, suffixes := range [][]string{{".service", ".scope"}, {".slice"}} {
		for i := len(elems) - 1; i >= 0; i-- {
			for _, s := range suffixes {
				if strings.HasSuffix(elems[i], s) && len(elems[i]) > len(s) {
					return elems[i]
				}
			}
		}
	}
	return path
}

// shortID is how many hex digits of a container id are shown, as docker ps does.
const shortID = 12

// containerID recognises a container runtime's cgroup element: a bare
// 64-hex id (cgroupfs driver) or docker-, cri-containerd-, crio-, libpod-
// and containerd- scopes (systemd driver).
func containerID(e string) (kind, id string) {
	e = strings.TrimSuffix(e, ".scope")
	for _, p := range []struct{ prefix, kind string }{
		{"docker-", "docker"}, {"cri-containerd-", "containerd"}, {"containerd-", "containerd"},
		{"crio-", "crio"}, {"libpod-", "podman"},
	} {
		if rest, ok := strings.CutPrefix(e, p.prefix); ok && isHexID(rest) {
			return p.kind, rest[:shortID]
		}
	}
	if isHexID(e) {
		return "container", e[:shortID]
	}
	return "", ""
}

func isHexID(s string) bool {
	if len(s) < 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// kubeName names a path under kubepods: the pod's UID, its QoS class
// (guaranteed pods have no class level) and the container's short id.
func kubeName(elems []string) string {
	if len(elems) == 0 || !strings.HasPrefix(elems[0], "kubepods") {
		return ""
	}
	qos, uid, ctr := "guaranteed", "", ""
	for _, e := range elems[1:] {
		base := strings.TrimSuffix(e, ".slice")
		// systemd driver: kubepods-burstable.slice, kubepods-burstable-pod<uid>.slice
		base = strings.TrimPrefix(base, "kubepods-")
		for _, q := range []string{"burstable", "besteffort"} {
			if base == q {
				qos = q
			} else if rest, ok := strings.CutPrefix(base, q+"-"); ok {
				qos, base = q, rest
			}
		}
		if rest, ok := strings.CutPrefix(base, "pod"); ok && len(rest) >= 8 {
			uid = strings.ReplaceAll(rest, "_", "-")
			continue
		}
		if _, id := containerID(e); id != "" {
			ctr = id
		}
	}
	if uid == "" {
		return ""
	}
	n := "pod " + uid + " (" + qos + ")"
	if ctr != "" {
		n += " " + ctr
	}
	return n
}
