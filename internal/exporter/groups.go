package exporter

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxtop/ctxtop/internal/exposition"
	"github.com/ctxtop/ctxtop/internal/model"
)

// otherLabel names the series that sums every group beyond --max-groups.
const otherLabel = "other"

// counts are the raw counters the exporter sums: one thread's, or a group's.
type counts struct {
	vol, invol, runNs, waitNs uint64
}

func (c *counts) add(a counts) {
	c.vol += a.vol
	c.invol += a.invol
	c.runNs += a.runNs
	c.waitNs += a.waitNs
}

// group is one name (or PID) at one level: a process group, or a thread group
// within a process group. A group that got a series of its own is its own
// target; one that did not sends its counts to an "other" group.
type group struct {
	// key is the label value: the name (or PID) made valid UTF-8 without
	// control characters.
	key    string
	target *group
	// proc is a thread group's process group (its target); nil for process groups.
	proc     *group
	exported bool
	// used is set once the group has had counts or threads: an "other"
	// group's series appears from then on and never goes away, so the
	// counter never disappears and comes back lower.
	used bool

	// dead holds what threads left behind when they exited or moved to
	// another group (renamed): it keeps the series a counter.
	dead counts
	// live is, at the last sample, the sum over the threads in the group of
	// their counters less their base.
	live counts
	// threads is how many live threads the series sums (including other
	// groups' when this is an "other" target); members is how many live
	// threads have this key, for eviction and the dropped count.
	threads, members, hot int
	// lastLive is, once the key has no live thread, the last pass at which
	// it had one (or the pass a thread resolved to it, during resolve).
	lastLive uint64
	// others is a process group's "other" thread group, nil until one of its
	// thread groups finds no free series.
	others *group
	// threadSeries is how many of a process group's thread groups have a
	// series of their own.
	threadSeries int
	// score orders new keys for admission: lifetime switches seen in the
	// pass that found them.
	score uint64
	// series are the group's metrics, built with their labels at the first
	// scrape that serves them; each scrape sets their values.
	series []exposition.Metric
}

func (g *group) total() counts {
	c := g.dead
	c.add(g.live)
	return c
}

// thread is the exporter's memory of one thread between samples.
type thread struct {
	pid, tid int
	start    uint64
	// comm and pcomm are the names the keys were derived from; a change moves
	// the thread to another group.
	comm, pcomm string
	// last is the thread's counters at the last sample; base is what they
	// were when it joined its current groups (zero from birth, or at the
	// exporter's first sample).
	last, base counts
	// hot is the thread's verdict in the last Snapshot (judge).
	hot        bool
	pkey, tkey *group
	// cgroup is the thread's cgroup at the last sample and ctr its
	// container's group (nil for none); cbase is what its counters were
	// when it joined it. ctrSeen is false until containers were first
	// looked at for the thread (containers.go).
	cgroup  string
	ctr     *ctrGroup
	cbase   counts
	ctrSeen bool
}

type threadKey struct {
	proc *group
	name string
}

// accounts turn a stream of Samples into group counters that never decrease.
type accounts struct {
	byPID     bool
	maxGroups int
	// hotTasks are the threads the last Snapshot found hot, which judge
	// clears before it marks the next Snapshot's.
	hotTasks []taskID

	procs   map[string]*group
	threads map[threadKey]*group
	// otherProc is group="other"; otherThread is its single thread group.
	otherProc, otherThread *group
	// exportedProcs and exportedThreads count the series handed out, which
	// --max-groups bounds at each level.
	exportedProcs, exportedThreads int

	tracked, next []thread
	unresolved    []int
	// emptied are keys without a series that lost their last thread in
	// this pass: forget drops them unless a thread joined them again.
	emptied      []*group
	pendingProcs []*group
	pendingThrs  []*group
	pass         uint64
	// ctrs are the per-container sums; nil when containers are off.
	ctrs *ctrAccounts
}

type taskID struct{ pid, tid int }

func newAccounts(byPID bool, maxGroups int) *accounts {
	a := &accounts{
		byPID:     byPID,
		maxGroups: maxGroups,
		procs:     make(map[string]*group),
		threads:   make(map[threadKey]*group),
	}
	a.otherProc = &group{key: otherLabel}
	a.otherProc.target = a.otherProc
	a.otherThread = &group{key: otherLabel, proc: a.otherProc}
	a.otherThread.target = a.otherThread
	return a
}

func taskCounts(t *model.TaskCounters) counts {
	return counts{vol: t.VoluntarySwitches, invol: t.InvoluntarySwitches, runNs: t.RunNs, waitNs: t.WaitNs}
}

func (c *counts) sub(a counts) {
	c.vol -= a.vol
	c.invol -= a.invol
	c.runNs -= a.runNs
	c.waitNs -= a.waitNs
}

// diff is a-b field by field; see addDiff.
func diff(a, b counts) counts {
	return counts{vol: a.vol - b.vol, invol: a.invol - b.invol, runNs: a.runNs - b.runNs, waitNs: a.waitNs - b.waitNs}
}

// join adds a thread whose groups were just resolved to their sums and
// counts: what it did since its base, one more thread and member.
func (a *accounts) join(t *thread) {
	p, tg := t.pkey.target, t.tkey.target
	d := diff(t.last, t.base)
	p.live.add(d)
	tg.live.add(d)
	p.threads++
	tg.threads++
	p.used, tg.used = true, true
	t.pkey.members++
	t.tkey.members++
	if t.hot {
		p.hot++
	}
}

// leave moves a thread's contribution from the live sums of its groups to
// their dead sums, so the groups keep it after the thread is gone (exited,
// its TID reused, or renamed into other groups).
func (a *accounts) leave(t *thread) {
	p, tg := t.pkey.target, t.tkey.target
	d := diff(t.last, t.base)
	p.live.sub(d)
	tg.live.sub(d)
	p.dead.add(d)
	tg.dead.add(d)
	p.threads--
	tg.threads--
	if t.hot {
		p.hot--
	}
	for _, g := range [2]*group{t.pkey, t.tkey} {
		g.members--
		if g.members == 0 {
			// It had a thread up to the last pass.
			g.lastLive = a.pass - 1
			if !g.exported {
				a.emptied = append(a.emptied, g)
			}
		}
	}
}

// advance moves a tracked thread to its counters in this sample: the change
// goes straight into its groups' live sums, so a thread that did not run
// costs a comparison, and groups of sleeping threads keep their sums
// untouched. It reports whether the thread was renamed out of its groups
// (it then needs resolving).
func (a *accounts) advance(t *thread, tc *model.TaskCounters) (renamed bool) {
	cur := taskCounts(tc)
	if tc.Comm != t.comm || tc.ProcessComm != t.pcomm && !a.byPID {
		// Renamed: what it did so far stays with the old groups; the new
		// ones count from the last sample on.
		a.leave(t)
		if t.ctr != nil {
			// Its container is its cgroup's, which a name does not change.
			t.ctr.target.live.add(diff(cur, t.last))
		}
		t.base = t.last
		t.pkey, t.tkey = nil, nil
		t.last = cur
		t.comm, t.pcomm = tc.Comm, tc.ProcessComm
		return true
	}
	t.pcomm = tc.ProcessComm // may change with --group-by pid
	if cur != t.last {
		d := diff(cur, t.last)
		t.pkey.target.live.add(d)
		t.tkey.target.live.add(d)
		if t.ctr != nil {
			t.ctr.target.live.add(d)
		}
		t.last = cur
	}
	return false
}

// update folds one Sample (tasks sorted by PID, then TID) into the groups,
// and the hot verdicts of snap, the Snapshot the pipeline derived from the
// same pass: nil when the pass ended none, and the verdicts stand.
//
// The groups' sums and counts are kept up to date thread by thread, not
// recomputed: while the sample lists the threads of the last one, each is
// updated in place; from the first difference (a birth, an exit, a reused
// TID) the rest is merged into a new list.
func (a *accounts) update(tasks []model.TaskCounters, snap *model.Snapshot) {
	a.pass++
	a.unresolved = a.unresolved[:0]
	a.emptied = a.emptied[:0]
	old := a.tracked
	i := 0
	for ; i < len(tasks) && i < len(old); i++ {
		tc, t := &tasks[i], &old[i]
		if t.pid != tc.PID || t.tid != tc.TID || t.start != tc.StartTime {
			break
		}
		if a.advance(t, tc) {
			a.unresolved = append(a.unresolved, i)
		}
	}
	if i < len(tasks) || i < len(old) {
		next := append(a.next[:0], old[:i]...)
		oi := i
		for ; i < len(tasks); i++ {
			tc := &tasks[i]
			for oi < len(old) && (old[oi].pid < tc.PID || old[oi].pid == tc.PID && old[oi].tid < tc.TID) {
				a.leave(&old[oi]) // exited
				ctrLeave(&old[oi])
				oi++
			}
			if oi < len(old) && old[oi].pid == tc.PID && old[oi].tid == tc.TID {
				t := old[oi]
				oi++
				if t.start == tc.StartTime {
					if a.advance(&t, tc) {
						a.unresolved = append(a.unresolved, len(next))
					}
					next = append(next, t)
					continue
				}
				a.leave(&t) // the TID was reused: the old thread exited
				ctrLeave(&t)
			}
			a.unresolved = append(a.unresolved, len(next))
			next = append(next, thread{pid: tc.PID, tid: tc.TID, start: tc.StartTime,
				comm: tc.Comm, pcomm: tc.ProcessComm, last: taskCounts(tc)})
		}
		for ; oi < len(old); oi++ {
			a.leave(&old[oi])
			ctrLeave(&old[oi])
		}
		a.tracked, a.next = next, old[:0]
	}
	a.resolve()
	if snap != nil {
		a.judge(snap)
	}
	a.forget()
}

// judge takes the hot verdicts of snap, whose rows are the threads of the
// tasks just folded in that moved: those it calls hot are, every other
// thread is not. Hot threads are few, and found by bisection in the tracked
// list (sorted as the tasks), so a pass over 10,000 idle threads pays
// nothing here. A thread exited since the last verdicts has left its
// groups with its hot count (leave), and a TID reused since names a new
// thread, which is not hot.
func (a *accounts) judge(snap *model.Snapshot) {
	for _, id := range a.hotTasks {
		if t := a.find(id); t != nil && t.hot {
			t.hot = false
			t.pkey.target.hot--
		}
	}
	a.hotTasks = a.hotTasks[:0]
	for i := range snap.Threads {
		r := &snap.Threads[i]
		if !r.Hot {
			continue
		}
		id := taskID{r.PID, r.TID}
		if t := a.find(id); t != nil && !t.hot {
			t.hot = true
			t.pkey.target.hot++
			a.hotTasks = append(a.hotTasks, id)
		}
	}
}

// find is the tracked thread id, nil when there is none.
func (a *accounts) find(id taskID) *thread {
	i, ok := slices.BinarySearchFunc(a.tracked, id, func(t thread, id taskID) int {
		if t.pid != id.pid {
			return t.pid - id.pid
		}
		return t.tid - id.tid
	})
	if !ok {
		return nil
	}
	return &a.tracked[i]
}

// procKey is the process group a thread belongs to: its process's name
// grouped by the monitor's rule (model.ProcessGroup: runs of digits
// collapsed, so worker-1 and worker-2 are worker-*, as g shows them), or its
// PID with --group-by pid.
func (a *accounts) procKey(t *thread) string {
	if a.byPID {
		return strconv.Itoa(t.pid)
	}
	return model.ProcessGroup(t.pcomm)
}

// resolve finds the groups of new and renamed threads, creating and admitting
// new groups busiest first.
func (a *accounts) resolve() {
	if len(a.unresolved) == 0 {
		return
	}
	a.pendingProcs = a.pendingProcs[:0]
	for _, i := range a.unresolved {
		t := &a.tracked[i]
		// Keyed by label value, so names that clean up alike share one
		// series rather than making the scrape fail on a duplicate.
		key := labelValue(a.procKey(t))
		g, ok := a.procs[key]
		if !ok {
			g = &group{key: key}
			a.procs[key] = g
			a.pendingProcs = append(a.pendingProcs, g)
		}
		if g.target == nil {
			g.score += t.last.vol + t.last.invol
		}
		// Not evictable in this pass: it has a thread again.
		g.lastLive = a.pass
		t.pkey = g
	}
	a.admit(a.pendingProcs, true)

	a.pendingThrs = a.pendingThrs[:0]
	for _, i := range a.unresolved {
		t := &a.tracked[i]
		p := t.pkey.target
		if p == a.otherProc {
			t.tkey = a.otherThread
			continue
		}
		name := labelValue(model.ThreadGroup(t.comm))
		k := threadKey{proc: p, name: name}
		g, ok := a.threads[k]
		if !ok {
			g = &group{key: name, proc: p}
			a.threads[k] = g
			a.pendingThrs = append(a.pendingThrs, g)
		}
		if g.target == nil {
			g.score += t.last.vol + t.last.invol
		}
		g.lastLive = a.pass
		t.tkey = g
	}
	a.admit(a.pendingThrs, false)
	for _, i := range a.unresolved {
		a.join(&a.tracked[i])
	}
}

// admit gives new groups series of their own, busiest first, while
// --max-groups allows, evicting groups that have no thread left if it must.
// The rest are summed into "other" for as long as they live: a group never
// moves between its own series and "other", which would make both jump.
func (a *accounts) admit(pending []*group, procs bool) {
	slices.SortFunc(pending, func(x, y *group) int {
		if x.score != y.score {
			if x.score > y.score {
				return -1
			}
			return 1
		}
		return strings.Compare(x.key, y.key)
	})
	for _, g := range pending {
		g.score = 0
		free := a.exportedThreads < a.maxGroups
		if procs {
			free = a.exportedProcs < a.maxGroups
		}
		if !free {
			free = a.evict(procs)
		}
		if !free {
			if procs {
				g.target = a.otherProc
			} else {
				if g.proc.others == nil {
					g.proc.others = &group{key: otherLabel, proc: g.proc}
					g.proc.others.target = g.proc.others
				}
				g.target = g.proc.others
			}
			continue
		}
		g.target, g.exported = g, true
		if procs {
			a.exportedProcs++
		} else {
			a.exportedThreads++
			g.proc.threadSeries++
		}
	}
}

// evict frees series held by a process group with no thread left, the one
// idle longest: its own series and those of its thread groups end together
// (a series that ends is not a counter reset). For a thread series it picks
// a process group that holds one. Thread groups of a process group with
// threads are never evicted alone: the process group's counter would then
// exceed the sum of its thread groups' for good.
func (a *accounts) evict(procs bool) bool {
	var victim *group
	for _, g := range a.procs {
		// No thread in this pass or the last: its final sums were served
		// at least once after its last thread left.
		if g.exported && g.members == 0 && g.lastLive < a.pass-1 && (procs || g.threadSeries > 0) &&
			(victim == nil || g.lastLive < victim.lastLive) {
			victim = g
		}
	}
	if victim == nil {
		return false
	}
	delete(a.procs, victim.key)
	a.exportedProcs--
	for k := range a.threads {
		if k.proc == victim {
			delete(a.threads, k)
		}
	}
	a.exportedThreads -= victim.threadSeries
	return true
}

// forget drops keys that lost their last thread in this pass and hold no
// series of their own.
func (a *accounts) forget() {
	for _, g := range a.emptied {
		if g.members != 0 || g.exported {
			continue
		}
		if g.proc == nil {
			if a.procs[g.key] == g {
				delete(a.procs, g.key)
			}
		} else if k := (threadKey{proc: g.proc, name: g.key}); a.threads[k] == g {
			delete(a.threads, k)
		}
	}
}

// eachSeries calls proc for every process group that has series and thread
// for every thread group that has: the exported ones, a process's "other"
// thread group once used, and group="other" with its thread group once
// anything was summed into it.
func (a *accounts) eachSeries(proc, thread func(*group)) {
	for _, g := range a.procs {
		if g.exported {
			proc(g)
			if g.others != nil && g.others.used {
				thread(g.others)
			}
		}
	}
	for _, g := range a.threads {
		if g.exported {
			thread(g)
		}
	}
	if a.otherProc.used {
		proc(a.otherProc)
		thread(a.otherThread)
	}
}

// dropped counts the keys summed into "other" at each level: every group
// kept that has no series of its own.
func (a *accounts) dropped() (procs, threads int) {
	return len(a.procs) - a.exportedProcs, len(a.threads) - a.exportedThreads
}

// labelValue is the label value of a group name. Names come from the
// sampler already through sanitize.Name: valid UTF-8 with every control
// character a '?'. Here the U+FFFD it puts for a byte that is not UTF-8
// becomes a '?' too, and a process really named "other" must not merge
// with the overflow series.
func labelValue(s string) string {
	if strings.ContainsRune(s, utf8.RuneError) {
		s = strings.ReplaceAll(s, string(utf8.RuneError), "?")
	}
	if s == otherLabel {
		return "'other'"
	}
	return s
}
