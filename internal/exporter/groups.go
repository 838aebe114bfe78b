package exporter

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/ctxtop/ctxtop/internal/model"
)

// otherLabel names the series that sums every group beyond --max-groups.
const otherLabel = "other"

// counts are the raw counters the exporter sums: one thread's, or a group's.
type counts struct {
	vol, invol, runNs, waitNs uint64
}

// addDiff adds a-b field by field. Per-thread counters never decrease (a
// thread whose TID was reused is a new thread), so a-b is never negative.
func (c *counts) addDiff(a, b counts) {
	c.vol += a.vol - b.vol
	c.invol += a.invol - b.invol
	c.runNs += a.runNs - b.runNs
	c.waitNs += a.waitNs - b.waitNs
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
	// control characters; label is the same string.
	key, label string
	target     *group
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
	// lastLive is the pass at which the key last had a live thread.
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
	// series caches the group's const metrics and the values they were built
	// from: a group whose sums did not move since the last scrape (every
	// thread asleep, the common case) is served them again.
	series seriesCache
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
	hot        bool
	pkey, tkey *group
}

type threadKey struct {
	proc *group
	name string
}

// accounts turn a stream of Samples into group counters that never decrease.
type accounts struct {
	byPID     bool
	maxGroups int
	hot       float64

	procs   map[string]*group
	threads map[threadKey]*group
	// otherProc is group="other"; otherThread is its single thread group.
	otherProc, otherThread *group
	// exportedProcs and exportedThreads count the series handed out, which
	// --max-groups bounds at each level.
	exportedProcs, exportedThreads int

	tracked, next []thread
	unresolved    []int
	pendingProcs  []*group
	pendingThrs   []*group
	pass          uint64
}

func newAccounts(byPID bool, maxGroups int, hot float64) *accounts {
	a := &accounts{
		byPID:     byPID,
		maxGroups: maxGroups,
		hot:       hot,
		procs:     make(map[string]*group),
		threads:   make(map[threadKey]*group),
	}
	a.otherProc = &group{key: otherLabel, label: otherLabel}
	a.otherProc.target = a.otherProc
	a.otherThread = &group{key: otherLabel, label: otherLabel, proc: a.otherProc}
	a.otherThread.target = a.otherThread
	return a
}

func taskCounts(t *model.TaskCounters) counts {
	return counts{vol: t.VoluntarySwitches, invol: t.InvoluntarySwitches, runNs: t.RunNs, waitNs: t.WaitNs}
}

// retire moves a thread's contribution from the live sums of its groups to
// their dead sums, so the groups keep it after the thread is gone.
func (t *thread) retire() {
	if t.pkey == nil {
		return
	}
	t.pkey.target.dead.addDiff(t.last, t.base)
	t.tkey.target.dead.addDiff(t.last, t.base)
	t.pkey.target.used = true
	t.tkey.target.used = true
}

// update folds one Sample (tasks sorted by PID, then TID) into the groups.
// seconds is the time since the previous sample, for the hot-thread count.
func (a *accounts) update(tasks []model.TaskCounters, seconds float64) {
	a.pass++
	old := a.tracked
	next := a.next[:0]
	a.unresolved = a.unresolved[:0]
	oi := 0
	for i := range tasks {
		tc := &tasks[i]
		for oi < len(old) && (old[oi].pid < tc.PID || old[oi].pid == tc.PID && old[oi].tid < tc.TID) {
			old[oi].retire() // exited
			oi++
		}
		cur := taskCounts(tc)
		var t thread
		if oi < len(old) && old[oi].pid == tc.PID && old[oi].tid == tc.TID {
			t = old[oi]
			oi++
			if t.start != tc.StartTime {
				t.retire() // the TID was reused: the old thread exited
				t = thread{}
			}
		}
		if t.pkey != nil {
			t.hot = seconds > 0 && float64(cur.vol+cur.invol-t.last.vol-t.last.invol)/seconds >= a.hot
			if tc.Comm != t.comm || tc.ProcessComm != t.pcomm && !a.byPID {
				// Renamed: what it did so far stays with the old groups;
				// the new ones count from the last sample on.
				t.retire()
				t.base = t.last
				t.pkey, t.tkey = nil, nil
			}
		}
		t.pid, t.tid, t.start = tc.PID, tc.TID, tc.StartTime
		t.comm, t.pcomm = tc.Comm, tc.ProcessComm
		t.last = cur
		if t.pkey == nil {
			a.unresolved = append(a.unresolved, len(next))
		}
		next = append(next, t)
	}
	for ; oi < len(old); oi++ {
		old[oi].retire()
	}
	a.tracked, a.next = next, old[:0]
	a.resolve()
	a.sum()
}

// procKey is the process group a thread belongs to: its process's name, with
// digits collapsed for kernel threads ("kworker/0:1" names one per CPU), or
// its PID with --group-by pid.
func (a *accounts) procKey(t *thread) string {
	if a.byPID {
		return strconv.Itoa(t.pid)
	}
	if strings.IndexByte(t.pcomm, '/') >= 0 {
		return model.ThreadGroup(t.pcomm)
	}
	return t.pcomm
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
			g = &group{key: key, label: key}
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
			g = &group{key: name, label: name, proc: p}
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
					g.proc.others = &group{key: otherLabel, label: otherLabel, proc: g.proc}
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
		if g.exported && g.members == 0 && g.lastLive < a.pass && (procs || g.threadSeries > 0) &&
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

// sum recomputes every group's live sums and thread counts, and forgets keys
// that lost their last thread and hold no series.
func (a *accounts) sum() {
	reset := func(g *group) {
		g.live, g.threads, g.members, g.hot = counts{}, 0, 0, 0
	}
	for _, g := range a.procs {
		reset(g)
		if g.others != nil {
			reset(g.others)
		}
	}
	for _, g := range a.threads {
		reset(g)
	}
	reset(a.otherProc)
	reset(a.otherThread)
	for i := range a.tracked {
		t := &a.tracked[i]
		p, tg := t.pkey.target, t.tkey.target
		p.live.addDiff(t.last, t.base)
		tg.live.addDiff(t.last, t.base)
		p.threads++
		tg.threads++
		p.used, tg.used = true, true
		t.pkey.members++
		t.tkey.members++
		t.pkey.lastLive, t.tkey.lastLive = a.pass, a.pass
		if t.hot {
			p.hot++
		}
	}
	for k, g := range a.procs {
		if g.members == 0 && !g.exported {
			delete(a.procs, k)
		}
	}
	for k, g := range a.threads {
		if g.members == 0 && !g.exported {
			delete(a.threads, k)
		}
	}
}

// dropped counts the keys summed into "other" at each level.
func (a *accounts) dropped() (procs, threads int) {
	for _, g := range a.procs {
		if !g.exported {
			procs++
		}
	}
	for _, g := range a.threads {
		if !g.exported {
			threads++
		}
	}
	return procs, threads
}

// labelValue makes a name from /proc safe as a label value: valid UTF-8,
// control characters replaced, and never the overflow series' own name.
func labelValue(s string) string {
	clean := true
	for _, r := range s {
		if r == unicode.ReplacementChar || unicode.IsControl(r) {
			clean = false
			break
		}
	}
	if !clean {
		s = strings.Map(func(r rune) rune {
			if r == unicode.ReplacementChar || unicode.IsControl(r) {
				return '?'
			}
			return r
		}, strings.ToValidUTF8(s, "?"))
	}
	if s == otherLabel {
		// A process really named "other" must not merge with the overflow.
		return "'other'"
	}
	return s
}
