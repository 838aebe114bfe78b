package model

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// DefaultHotThreshold is the switches/s at which a thread is hot when
// Options leaves it unset.
const DefaultHotThreshold = 1000

// Options tune Compute.
type Options struct {
	// HotThreshold is total switches/s at or above which a row is hot.
	HotThreshold float64
	// Partial says the samples hold only some processes (--pid), so the
	// switches outside the rows are not unexplained and are not reported.
	Partial bool
	// ShortReason is the WHY column's word for a wait reason ("futex" for
	// "futex wait"): package waitreason's table, which the pipeline passes in so
	// that the model needs no knowledge of system calls; nil keeps the
	// reason whole.
	ShortReason func(reason string) string
	// AfterStepBack says prev's host-wide counters stepped back from the
	// sample before it (StepsBack), so the interval prev→cur gets no
	// host-wide rates either. The pipeline, which sees the intervals in
	// order, sets it.
	AfterStepBack bool
}

// Compute derives the rates between two samples. It is pure: the same two
// samples always give the same Snapshot. Both samples' Tasks must be sorted
// by PID, then TID, as the sampler produces them. The Snapshot owns fresh
// slices; a loop that drops each Snapshot before the next one should use
// ComputeInto instead.
func Compute(prev, cur *Sample, opts Options) Snapshot {
	var s Snapshot
	ComputeInto(&s, prev, cur, opts)
	return s
}

// ComputeInto is Compute writing into dst and reusing the backing arrays of
// dst.Threads, dst.Processes and dst.System.PerCPU, so that a loop which keeps
// one Snapshot per tick allocates nothing once the slices have grown to the
// host's size. Those slices are overwritten by the next call: a caller that
// keeps rows across ticks (a history, a channel to another goroutine) must
// copy them first, or use Compute. The one allocation left is the reason
// string of a hot process whose threads' run-queue waits sum past 100%.
func ComputeInto(dst *Snapshot, prev, cur *Sample, opts Options) {
	hot := opts.HotThreshold
	if !(hot > 0) {
		hot = DefaultHotThreshold
	}
	interval := cur.Time.Sub(prev.Time)
	threads, procs, cgs, exited := dst.Threads[:0], dst.Processes[:0], dst.Cgroups[:0], dst.Exited[:0]
	*dst = Snapshot{
		Time:       cur.Time,
		Interval:   interval,
		Tasks:      len(cur.Tasks),
		Source:     cur.Source,
		Unreadable: cur.Unreadable,
		Partial:    opts.Partial,
		System:     systemRates(&prev.System, &cur.System, interval, opts.AfterStepBack, dst.System.PerCPU[:0]),
	}
	defer func() { dst.Threads, dst.Processes, dst.Cgroups, dst.Exited = threads, procs, cgs, exited }()
	if dst.Interval <= 0 {
		return
	}
	defer func() { exited = markProcessExits(exited, cur.Tasks) }()
	secs := interval.Seconds()
	ns := float64(interval.Nanoseconds())

	dst.Self = SelfRates{
		CPUPercent:     nonNeg(float64(cur.Self.CPUTime-prev.Self.CPUTime) / ns * 100),
		SwitchesPerSec: delta(prev.Self.VoluntarySwitches+prev.Self.InvoluntarySwitches, cur.Self.VoluntarySwitches+cur.Self.InvoluntarySwitches) / secs,
	}

	// Each task counts into its cgroup in this pass, not in one more pass
	// over every task.
	var x *cgroupIndex
	if len(cur.Cgroups) > 0 {
		x = cgroupIndexFor(cur.Cgroups)
		defer cgroupIndexes.Put(x)
	}
	// When cur is prev with only some tasks moved (a recording's deltas
	// say which), only those are visited: every other one is idle.
	same := sameTasks(prev, cur)
	if x != nil && (!same || !x.countedFrom(prev, cur)) {
		x.startCount()
		for j := 0; same && j < len(cur.Tasks); j++ {
			x.count(cur.Cgroups, &cur.Tasks[j])
		}
	}
	if x != nil {
		x.seq = cur.Seq
	}
	n := len(cur.Tasks)
	if same {
		n = len(cur.Moved)
	}

	// Merge-join on (PID, TID): both lists are sorted, so one pass, no map.
	// procs grows by one entry per PID of cur; an entry whose threads all
	// stayed idle is dropped when the next PID starts.
	open := false // procs[len(procs)-1] is the PID being summed
	i, wi := 0, 0
	for k := range n {
		j := k
		if same {
			j = int(cur.Moved[k])
		}
		c := &cur.Tasks[j]
		if !open || procs[len(procs)-1].PID != c.PID {
			procs = closeProcess(procs, open, hot)
			first, threads := c, 0
			if same {
				first, threads = processAt(cur.Tasks, j)
			}
			procs = append(procs, ProcessRates{PID: c.PID, Comm: first.ProcessComm, Cgroup: first.Cgroup, Threads: threads})
			open = true
		}
		pr := &procs[len(procs)-1]
		var p *TaskCounters
		if same {
			p = &prev.Tasks[j]
		} else {
			pr.Threads++
			if x != nil {
				x.count(cur.Cgroups, c)
			}
			for i < len(prev.Tasks) && less(&prev.Tasks[i], c) {
				exited = append(exited, ExitedTask{PID: prev.Tasks[i].PID, TID: prev.Tasks[i].TID})
				i++
			}
			if i >= len(prev.Tasks) || prev.Tasks[i].PID != c.PID || prev.Tasks[i].TID != c.TID {
				continue // new thread: no rate until it has two samples
			}
			p = &prev.Tasks[i]
			i++ // matched: not an exit
		}
		if p.StartTime != c.StartTime {
			exited = append(exited, ExitedTask{PID: p.PID, TID: p.TID})
		}
		if p.StartTime != c.StartTime || c.VoluntarySwitches < p.VoluntarySwitches ||
			c.InvoluntarySwitches < p.InvoluntarySwitches || c.RunNs < p.RunNs || c.WaitNs < p.WaitNs {
			continue // the TID now names another thread
		}
		if c.VoluntarySwitches == p.VoluntarySwitches && c.InvoluntarySwitches == p.InvoluntarySwitches &&
			c.RunNs == p.RunNs && c.WaitNs == p.WaitNs {
			continue // idle: most threads, most ticks
		}
		// Checked after the idle test, which drops the row anyway, so
		// that the many idle threads pay nothing for the table's loop.
		if countersStepBack(&p.Counters, &c.Counters) {
			continue // the TID now names another thread
		}
		// The thread's own interval: from when its counters were read in
		// prev to when they were read in cur. Read times put every
		// thread's counters a pass took in at the same instant; the
		// pass's start would stretch or shrink a thread's interval by
		// however much later into the pass it was read this time.
		span := threadSpan(interval, p.ReadAt, c.ReadAt)
		if span <= 0 {
			continue // no time between the reads (a damaged recording): no rate
		}
		spanSecs, spanNs := span.Seconds(), float64(span)
		run, wait := c.RunNs-p.RunNs, c.WaitNs-p.WaitNs
		inWait, earlier := splitWait(run, wait, uint64(span))
		t := ThreadRates{
			PID: c.PID, TID: c.TID, Comm: c.Comm, ProcessComm: c.ProcessComm,
			VoluntaryPerSec:   float64(c.VoluntarySwitches-p.VoluntarySwitches) / spanSecs,
			InvoluntaryPerSec: float64(c.InvoluntarySwitches-p.InvoluntarySwitches) / spanSecs,
			CPUPercent:        float64(run) / spanNs * 100,
			WaitPercent:       float64(inWait) / spanNs * 100,
			EarlierWait:       time.Duration(earlier),
			CPUsAllowed:       c.CPUsAllowed,
			State:             c.State,
			LastCPU:           c.LastCPU,
			Cgroup:            c.Cgroup,
		}
		for k := range t.PerSec {
			t.PerSec[k] = float64(c.Counters[k]-p.Counters[k]) / spanSecs
		}
		if n := CountCPUs(c.CPUsAllowed); n > 0 && n < cur.System.CPUs {
			t.Pinned = true
		}
		t.Hot, t.Why = classify(t.VoluntaryPerSec, t.InvoluntaryPerSec, t.WaitPercent, hot)
		for wi < len(cur.Waits) && (cur.Waits[wi].PID < c.PID || cur.Waits[wi].PID == c.PID && cur.Waits[wi].TID < c.TID) {
			wi++
		}
		if wi < len(cur.Waits) && cur.Waits[wi].PID == c.PID && cur.Waits[wi].TID == c.TID {
			attachWaits(&t, &cur.Waits[wi], opts.ShortReason)
		}
		pr.VoluntaryPerSec += t.VoluntaryPerSec
		pr.InvoluntaryPerSec += t.InvoluntaryPerSec
		pr.CPUPercent += t.CPUPercent
		pr.WaitPercent += t.WaitPercent
		pr.EarlierWait += t.EarlierWait
		threads = append(threads, t)
	}
	for ; !same && i < len(prev.Tasks); i++ {
		exited = append(exited, ExitedTask{PID: prev.Tasks[i].PID, TID: prev.Tasks[i].TID})
	}
	procs = closeProcess(procs, open, hot)
	cgs = cgroupRates(cgs, x, prev, cur, threads, secs, hot)
	attachContainers(threads, procs, cur)
	if !opts.Partial && dst.System.NoRates == "" {
		var rows float64
		for i := range threads {
			rows += threads[i].TotalPerSec()
		}
		dst.UnattributedPerSec = nonNeg(dst.System.ContextSwitchesPerSec - rows)
	}
	sortByRate(threads, func(t *ThreadRates) (float64, float64) { return t.TotalPerSec(), t.CPUPercent })
	sortByRate(procs, func(p *ProcessRates) (float64, float64) { return p.TotalPerSec(), p.CPUPercent })
}

// countersStepBack reports whether any Counter of cur is below prev's.
func countersStepBack(prev, cur *[NumCounters]uint64) bool {
	for k := range cur {
		if cur[k] < prev[k] {
			return true
		}
	}
	return false
}

// sameTasks reports whether cur says it holds prev's tasks in prev's
// places with only those at cur.Moved changed, and Moved is such a list.
func sameTasks(prev, cur *Sample) bool {
	if cur.SameTasksAs == 0 || cur.SameTasksAs != prev.Seq || len(cur.Tasks) != len(prev.Tasks) {
		return false
	}
	last := int32(-1)
	for _, j := range cur.Moved {
		if j <= last || int(j) >= len(cur.Tasks) {
			return false
		}
		last = j
	}
	return true
}

// processAt is the first thread of the process of tasks[j] (sorted by PID)
// and how many threads it has, found by bisection, not by a walk over a
// process of thousands of threads.
func processAt(tasks []TaskCounters, j int) (*TaskCounters, int) {
	pid := tasks[j].PID
	lo := sort.Search(j, func(k int) bool { return tasks[k].PID >= pid })
	hi := j + sort.Search(len(tasks)-j, func(k int) bool { return tasks[j+k].PID > pid })
	return &tasks[lo], hi - lo
}

// markProcessExits sets Process on each exit whose PID has no thread left
// in tasks (sorted by PID): a binary search per exit, so a quiet host pays
// nothing.
func markProcessExits(exited []ExitedTask, tasks []TaskCounters) []ExitedTask {
	for k := range exited {
		e := &exited[k]
		if k > 0 && exited[k-1].PID == e.PID {
			e.Process = exited[k-1].Process
			continue
		}
		j := sort.Search(len(tasks), func(j int) bool { return tasks[j].PID >= e.PID })
		e.Process = j == len(tasks) || tasks[j].PID != e.PID
	}
	return exited
}

// splitWait divides the run-queue wait the kernel added over a thread's
// interval of span ns, in which it ran run ns, into the part that fits in
// the interval and the part that began before it. The kernel adds a wait
// to schedstat's second field only when the thread gets a CPU (the
// scheduler's sched_info_arrive), whole, however long ago it began: a
// thread starved for two seconds shows two seconds of wait in the one
// interval in which it finally runs. Within one interval a thread cannot
// wait while it runs, so its wait there is at most span−run; the rest of
// what was added waited in earlier intervals, which were reported already
// and cannot take it back. It is returned as earlier, never dropped.
func splitWait(run, wait, span uint64) (in, earlier uint64) {
	free := uint64(0)
	if run < span {
		free = span - run
	}
	in = min(wait, free)
	return in, wait - in
}

// closeProcess finishes the last process of procs: drops it when none of
// its threads moved, else classifies its sums with the threads' rule.
func closeProcess(procs []ProcessRates, open bool, hot float64) []ProcessRates {
	if !open {
		return procs
	}
	p := &procs[len(procs)-1]
	if p.TotalPerSec() == 0 && p.CPUPercent == 0 && p.WaitPercent == 0 {
		return procs[:len(procs)-1]
	}
	p.Hot, p.Why = classify(p.VoluntaryPerSec, p.InvoluntaryPerSec, p.WaitPercent, hot)
	return procs
}

// rowKey is what a row sorts by. Rows are appended in (PID, TID) order,
// so the row index is the tie-break.
type rowKey struct {
	total, cpu float64
	row        int32
}

// keyPool keeps sortByRate's scratch between ticks, so a busy host's sort
// allocates nothing in the steady state and ComputeInto keeps its signature.
var keyPool = sync.Pool{New: func() any { return new([]rowKey) }}

// sortByRate sorts rows, given in (PID, TID) order, by total switches/s
// and then %CPU, both descending, ties in the order given: PID, TID. A
// ThreadRates is some 200 bytes with pointers in it, and sorting 10,000 of
// them in place spent its time copying them through comparisons and swaps;
// sorting small contiguous keys, then moving each row once, took
// BenchmarkComputeInto10kBusyThreads from 3.6 ms to 1.5 ms. One key sort
// for threads and processes also links one copy of the sort, not one per
// row type (some 6 KB each, growing with the row).
func sortByRate[T any](ts []T, rate func(*T) (total, cpu float64)) {
	kp := keyPool.Get().(*[]rowKey)
	keys := (*kp)[:0]
	for i := range ts {
		total, cpu := rate(&ts[i])
		keys = append(keys, rowKey{total, cpu, int32(i)})
	}
	slices.SortFunc(keys, func(a, b rowKey) int {
		switch {
		case a.total != b.total:
			if a.total > b.total {
				return -1
			}
			return 1
		case a.cpu != b.cpu:
			if a.cpu > b.cpu {
				return -1
			}
			return 1
		}
		return int(a.row - b.row)
	})
	// Apply the permutation in place, one cycle at a time: the new ts[j] is
	// the old ts[keys[j].row]; a visited slot is marked -1.
	for i := range ts {
		if keys[i].row < 0 {
			continue
		}
		first := ts[i]
		j := i
		for {
			k := int(keys[j].row)
			keys[j].row = -1
			if k == i {
				ts[j] = first
				break
			}
			ts[j] = ts[k]
			j = k
		}
	}
	*kp = keys
	keyPool.Put(kp)
}

func less(a, b *TaskCounters) bool {
	return a.PID < b.PID || a.PID == b.PID && a.TID < b.TID
}

func byRate(ta, tb, ca, cb float64, pa, pb, ia, ib int) int {
	switch {
	case ta != tb:
		if ta > tb {
			return -1
		}
		return 1
	case ca != cb:
		if ca > cb {
			return -1
		}
		return 1
	case pa != pb:
		return pa - pb
	}
	return ia - ib
}

// isHot is the one hot rule, for every row the model classifies (the
// exporter counts the hot threads of the Snapshots it is given): total
// switches/s at or above the threshold (DefaultHotThreshold when it is not
// positive).
func isHot(voluntaryPerSec, involuntaryPerSec, threshold float64) bool {
	if !(threshold > 0) {
		threshold = DefaultHotThreshold
	}
	return voluntaryPerSec+involuntaryPerSec >= threshold
}

// threadSpan is the interval one thread's rates are taken over: from when
// its counters were read in one sample (prevReadAt) to when they were read
// in the next (curReadAt), the samples' Times interval apart. A pass over 10,000 threads is long enough that the
// samples' interval alone would stretch or shrink a thread's by however much
// later into the pass it was read this time.
func threadSpan(interval, prevReadAt, curReadAt time.Duration) time.Duration {
	return interval + curReadAt - prevReadAt
}

// classify applies the hot rule: at or above the threshold, mostly
// involuntary switches mean the thread is preempted (more runnable threads
// than CPUs), mostly voluntary mean it blocks (locks, I/O, hand-offs).
func classify(vol, invol, waitPct, threshold float64) (bool, Why) {
	if !isHot(vol, invol, threshold) {
		return false, Why{}
	}
	kind := Blocking
	if invol > vol {
		kind = Preempted
	}
	w := math.Round(waitPct)
	if !(w >= 0) {
		w = 0
	}
	return true, Why{Kind: kind, HasWait: true, Wait: float32(w)}
}

var reasonWords = [2]string{"blocking", "preempted"}

// reasons holds every hot reason a thread can have, built once, so a busy
// host with hundreds of hot threads formats no string per tick.
var reasons = func() (r [2][101]string) {
	for why, word := range reasonWords {
		for w := range r[why] {
			r[why][w] = fmt.Sprintf("%s, wait %d%%", word, w)
		}
	}
	return r
}()

// The words SystemRates.NoRates says its reasons in, in every view.
const (
	NoRatesStepBack      = "a host counter stepped back (a reset)"
	NoRatesAfterStepBack = "the interval after a host counter stepped back"
	noRatesUnreadBefore  = "the read that began the interval failed: "
)

// StepsBack reports whether a host-wide counter of cur is lower than in
// prev. The kernel's counters only grow, so a step back is a reset: a
// procfs tree rewritten (--proc), a bad read, a buggy kernel. The rule,
// for every view and a replay alike:
//
//   - the interval in which a counter steps back has no host-wide rates
//     (cs/s, in/s, res/s, per CPU), said so (SystemRates.NoRates);
//   - neither has the interval after it: which of the reads was wrong is
//     not known, and a counter that went back and then forward to where it
//     was (100, 50, 100) would show its whole climb back as one interval's
//     switches, 10 million a second for a /proc/stat ctxt of some millions;
//   - rates resume from the second interval after the step back, from
//     whatever level the counter is at (a real reset, 100, 50, 60, 70,
//     gives no rate, no rate, then 10 per interval).
//
// A failed read of /proc/stat (SystemCounters.Unread) is treated alike:
// no rates for the intervals it ends and begins. Thread counters that
// step back are a new thread that reused the TID: no row that interval.
func StepsBack(prev, cur *SystemCounters) bool {
	if cur.ContextSwitches < prev.ContextSwitches || cur.Interrupts < prev.Interrupts {
		return true
	}
	// An unreadable /proc/interrupts leaves RES at 0 and no CPUs: not a
	// step back of a counter that was read twice.
	return len(prev.ReschedPerCPU) > 0 && len(cur.ReschedPerCPU) > 0 && cur.ReschedIPIs < prev.ReschedIPIs
}

// systemNoRates is why prev→cur has no host-wide rates, "" when it has.
func systemNoRates(prev, cur *SystemCounters, afterStepBack bool) string {
	switch {
	case cur.Unread != "":
		return cur.Unread
	case prev.Unread != "":
		return noRatesUnreadBefore + prev.Unread
	case StepsBack(prev, cur):
		return NoRatesStepBack
	case afterStepBack:
		return NoRatesAfterStepBack
	}
	return ""
}

// systemRates fills perCPU (length 0, reused capacity) with the per-CPU rates.
func systemRates(prev, cur *SystemCounters, interval time.Duration, afterStepBack bool, perCPU []CPURates) SystemRates {
	r := SystemRates{
		ProcsRunning:    cur.ProcsRunning,
		ProcsBlocked:    cur.ProcsBlocked,
		CPUs:            cur.CPUs,
		PSICPUSomeAvg10: cur.PSICPUSomeAvg10,
		HasPSI:          cur.HasPSI,
		LoadAvg:         cur.LoadAvg,
	}
	if interval <= 0 {
		return r
	}
	if r.NoRates = systemNoRates(prev, cur, afterStepBack); r.NoRates != "" {
		return r
	}
	secs := interval.Seconds()
	r.ContextSwitchesPerSec = delta(prev.ContextSwitches, cur.ContextSwitches) / secs
	r.InterruptsPerSec = delta(prev.Interrupts, cur.Interrupts) / secs
	r.ReschedIPIsPerSec = delta(prev.ReschedIPIs, cur.ReschedIPIs) / secs
	n := min(len(cur.InterruptsPerCPU), len(prev.InterruptsPerCPU), len(cur.ReschedPerCPU), len(prev.ReschedPerCPU))
	// A CPU that came online since prev has no rate yet; one that went
	// offline has none any more.
	for c := range n {
		perCPU = append(perCPU, CPURates{
			InterruptsPerSec:  delta(prev.InterruptsPerCPU[c], cur.InterruptsPerCPU[c]) / secs,
			ReschedIPIsPerSec: delta(prev.ReschedPerCPU[c], cur.ReschedPerCPU[c]) / secs,
		})
	}
	if n > 0 {
		r.PerCPU = perCPU
	}
	return r
}

// delta is cur-prev, or 0 when the counter went backwards (a reset or a
// different source): never negative, never a wrapped huge number.
func delta(prev, cur uint64) float64 {
	if cur < prev {
		return 0
	}
	return float64(cur - prev)
}

func nonNeg(v float64) float64 {
	if v < 0 || math.IsNaN(v) {
		return 0
	}
	return v
}

// CountCPUs counts the CPUs in a list like "0-3,8,10-11"; 0 when malformed.
func CountCPUs(list string) int {
	n := 0
	for i := 0; i < len(list); {
		lo, j, ok := atoi(list, i)
		if !ok {
			return 0
		}
		hi := lo
		if j < len(list) && list[j] == '-' {
			if hi, j, ok = atoi(list, j+1); !ok || hi < lo {
				return 0
			}
		}
		n += hi - lo + 1
		if j < len(list) {
			if list[j] != ',' {
				return 0
			}
			j++
		}
		i = j
	}
	return n
}

func atoi(s string, i int) (int, int, bool) {
	v, start := 0, i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && v < 1<<20 {
		v = v*10 + int(s[i]-'0')
		i++
	}
	return v, i, i > start
}
