package model

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/sorts"
)

// StackSample is the stack tracer's read at the end of an interval: every
// stack its targets were sampled at during the interval, symbolized on the
// host that ran them, with raw counts. Like WakeupSample it goes into a
// Sample, and so into a recording; the pipeline makes the Stacks a
// Snapshot shows from the last few (SummarizeStacks), live and in a replay
// alike.
type StackSample struct {
	// Time is when the tracer was read. It tells one read from another:
	// a sample derived twice (a late wait look) is one interval.
	Time time.Time
	// Unavailable says in one line why there are no stacks, "" when the
	// tracer runs; the rest is empty then.
	Unavailable string
	// KernelHidden: kernel frames could not be named and are left out.
	KernelHidden bool
	// Targets are the threads traced during the interval.
	Targets []int
	// Dropped and InterruptWakings are the interval's (Stacks has them).
	Dropped, InterruptWakings uint64
	// Attached is the share of the interval the tracer was attached (on
	// a busy host, a window of it; the counts' weights stand for the
	// whole interval): 1 throughout, 0 where unknown (recordings made
	// before it was kept), which was throughout.
	Attached float64
	// Blocked are where the targets blocked, Woken where their wakers
	// were; each sorted by TID, then waker, then frames, one entry per
	// thread, waker and stack.
	Blocked, Woken []StackCount
}

// StackCount is how many of a thread's sampled events were at one stack.
type StackCount struct {
	// TID is the target thread. PID is its process for a blocked stack,
	// the waking thread's process for a wake-up stack.
	TID, PID int
	// Waker is the waking thread's name, for a wake-up stack.
	Waker string
	Stack
	Count uint64
	// Weight is how many events the samples stand for (the sum of each
	// sample's one-in-N); 0 where it is not known (recordings made before
	// it was kept), and Count stands for itself.
	Weight uint64
}

// weight is c's events: its Weight, or its Count where that is unknown.
func (c *StackCount) weight() uint64 {
	if c.Weight > 0 {
		return c.Weight
	}
	return c.Count
}

// Stack is a symbolized stack, as StackShare shows it.
type Stack struct {
	// Frames are innermost first: KernelFrames kernel frames, then the
	// user frames. Sanitized.
	Frames       []string
	KernelFrames int
	// Own is the innermost frame of the program's own code, "" for none.
	Own string
	// NoFramePointers names the object the user walk likely stopped in.
	NoFramePointers string
	// Truncated says why an unwound user stack ends before its outermost
	// frame ("stack copy too short", "no unwind info in libfoo.so",
	// "address outside any executable mapping: 0x..."); "" when whole.
	Truncated string
}

// StackOptions say how the stacks of a Snapshot are made from samples.
type StackOptions struct {
	// Window is how many reads the shares are over (default 5), Top how
	// many stacks a thread shows of each kind (default 3).
	Window, Top int
	// Folded keeps the interval's stacks for flame graphs.
	Folded bool
}

// StackWindow holds the last reads of one attachment of the tracer, the
// shares' window. It is the one piece of state stacks need across
// intervals.
type StackWindow struct {
	opts  StackOptions
	reads []*StackSample
}

// DefaultStackWindow and DefaultStackTop are StackOptions' defaults.
const (
	DefaultStackWindow = 5
	DefaultStackTop    = 3
)

// NewStackWindow is an empty window.
func NewStackWindow(o StackOptions) *StackWindow {
	if o.Window <= 0 {
		o.Window = DefaultStackWindow
	}
	if o.Top <= 0 {
		o.Top = DefaultStackTop
	}
	return &StackWindow{opts: o}
}

// SetFolded keeps (or stops keeping) the interval's stacks for flame graphs.
func (w *StackWindow) SetFolded(on bool) { w.opts.Folded = on }

// Reset forgets every read: the tracer was detached, or reads were lost.
func (w *StackWindow) Reset() { w.reads = w.reads[:0] }

// Observe adds s to the window: nil (the tracer off) empties it, a read
// seen already (the same Time) replaces the last, an unavailable one
// leaves it as it is.
func (w *StackWindow) Observe(s *StackSample) {
	switch {
	case s == nil:
		w.Reset()
	case s.Unavailable != "":
	case len(w.reads) > 0 && w.reads[len(w.reads)-1].Time.Equal(s.Time):
		w.reads[len(w.reads)-1] = s
	default:
		w.reads = append(w.reads, s)
		if n := len(w.reads) - w.opts.Window; n > 0 {
			w.reads = slices.Delete(w.reads, 0, n)
		}
	}
}

// Stacks is what a Snapshot shows after Observe(s): s's targets and
// counts, and each thread's top stacks over the window. threads name the
// folded stacks' threads.
func (w *StackWindow) Stacks(s *StackSample, threads []ThreadRates) *Stacks {
	if s == nil {
		return nil
	}
	if s.Unavailable != "" {
		return &Stacks{Unavailable: s.Unavailable}
	}
	st := &Stacks{
		KernelHidden: s.KernelHidden, Targets: slices.Clone(s.Targets), Refreshes: len(w.reads),
		Dropped: s.Dropped, InterruptWakings: s.InterruptWakings, Attached: s.Attached, Threads: map[int]*ThreadStacks{},
	}
	thread := func(tid int) *ThreadStacks {
		t := st.Threads[tid]
		if t == nil {
			t = &ThreadStacks{TID: tid}
			st.Threads[tid] = t
		}
		return t
	}
	for tid, ss := range w.top(func(r *StackSample) []StackCount { return r.Blocked }) {
		t := thread(tid)
		t.PID, t.BlockedAt = ss.pid, ss.top
	}
	for tid, ss := range w.top(func(r *StackSample) []StackCount { return r.Woken }) {
		thread(tid).WokenFrom = ss.top
	}
	if w.opts.Folded {
		st.Folded = foldStacks(s, threads)
	}
	return st
}

type threadTop struct {
	pid int
	top []StackShare
}

// top sums the window's counts of one kind per thread, waker and stack,
// and keeps each thread's biggest.
func (w *StackWindow) top(get func(*StackSample) []StackCount) map[int]threadTop {
	type entry struct {
		c             *StackCount
		key           string
		count, weight uint64
	}
	type sum struct {
		pid   int
		byKey map[string]*entry
		total uint64
	}
	sums := map[int]*sum{}
	for _, r := range w.reads {
		for i := range get(r) {
			c := &get(r)[i]
			s := sums[c.TID]
			if s == nil {
				s = &sum{byKey: map[string]*entry{}}
				sums[c.TID] = s
			}
			if s.pid == 0 && c.Waker == "" {
				s.pid = c.PID
			}
			s.total += c.weight()
			key := strings.Join(c.Frames, ";")
			if c.Truncated != "" {
				key += "\x00" + c.Truncated
			}
			if c.Waker != "" {
				key = c.Waker + "\x00" + key
			}
			if e := s.byKey[key]; e != nil {
				e.count += c.Count
				e.weight += c.weight()
			} else {
				s.byKey[key] = &entry{c: c, key: key, count: c.Count, weight: c.weight()}
			}
		}
	}
	out := make(map[int]threadTop, len(sums))
	for tid, s := range sums {
		all := make([]*entry, 0, len(s.byKey))
		for _, e := range s.byKey {
			all = append(all, e)
		}
		slices.SortFunc(all, func(a, b *entry) int {
			return cmp.Or(cmp.Compare(b.weight, a.weight), strings.Compare(a.key, b.key))
		})
		var top []StackShare
		for _, e := range all[:min(len(all), w.opts.Top)] {
			top = append(top, StackShare{Frames: e.c.Frames, KernelFrames: e.c.KernelFrames, Own: e.c.Own, Waker: e.c.Waker,
				Count: e.count, Share: float64(e.weight) / float64(s.total), NoFramePointers: e.c.NoFramePointers, Truncated: e.c.Truncated})
		}
		out[tid] = threadTop{pid: s.pid, top: top}
	}
	return out
}

// foldStacks is the interval's stacks, root first, for flame graphs:
// off-CPU stacks under "comm;[off-cpu]", waker stacks under
// "comm;[woken by WAKER]".
func foldStacks(s *StackSample, threads []ThreadRates) []FoldedStack {
	comms := make(map[int]string, len(threads))
	procs := make(map[int]string, len(threads))
	for i := range threads {
		comms[threads[i].TID] = threads[i].Comm
		procs[threads[i].TID] = threads[i].ProcessComm
	}
	var out []FoldedStack
	emit := func(cs []StackCount, woken bool) {
		for i := range cs {
			c := &cs[i]
			name := comms[c.TID]
			if name == "" {
				name = strconv.Itoa(c.TID)
			}
			marker := "[off-cpu]"
			if woken {
				marker = "[woken by " + c.Waker + "]"
			}
			f := make([]string, 0, len(c.Frames)+2)
			f = append(f, name, marker)
			for j := len(c.Frames) - 1; j >= 0; j-- {
				f = append(f, c.Frames[j])
			}
			out = append(out, FoldedStack{Frames: f, Count: c.Count, Process: procs[c.TID]})
		}
	}
	emit(s.Blocked, false)
	emit(s.Woken, true)
	sorts.Func(out, func(a, b FoldedStack) int {
		return strings.Compare(strings.Join(a.Frames, ";"), strings.Join(b.Frames, ";"))
	})
	return out
}
