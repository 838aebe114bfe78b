package model

// StackShare is one stack's part of a thread's voluntary switches (where it
// blocked) or of its wake-ups by tasks (where its waker was).
type StackShare struct {
	// Frames are the stack's function names, innermost first: the kernel
	// frames (KernelFrames of them; none when kernel symbols are hidden),
	// then the user frames. Sanitized.
	Frames       []string
	KernelFrames int
	// Own is the innermost frame of the program's own code (not libc, the
	// Go runtime or the kernel), "" when there is none.
	Own string
	// Waker is the waking thread's name, for a wake-up stack.
	Waker string
	// Count is how many of the thread's sampled blocking switches (or
	// wakings) were at this stack over the window. Share is the events
	// those samples stand for over all of the thread's: each sample
	// weighs the one-in-N it was taken at (the kernel samples a busy
	// thread's events, independently of their stacks, at a rate that
	// changes with the thread's).
	Count uint64
	Share float64
	// NoFramePointers names the object the user stack walk likely stopped
	// in for want of frame pointers, "" when the walk looks whole.
	NoFramePointers string
	// Truncated says why the unwound user stack ends early, "" when whole.
	Truncated string
}

// ThreadStacks are a target thread's top stacks over the last refreshes.
type ThreadStacks struct {
	// PID is 0 when the thread was only seen woken, not blocking.
	PID, TID int
	// BlockedAt and WokenFrom are the top stacks, biggest share first.
	BlockedAt, WokenFrom []StackShare
}

// FoldedStack is one line of collapsed stacks for flame graphs: frames
// root-first (outermost first), as flamegraph.pl reads them.
type FoldedStack struct {
	Frames []string
	Count  uint64
	// Process is the name of the thread's process, for a flame graph
	// per process (--processes); "" when the thread had no row.
	Process string
}

// Stacks is what the stack tracer saw: nil in a Snapshot while it is off.
type Stacks struct {
	// Unavailable says in one line why there are no stacks (privileges,
	// no BTF), "" when the tracer runs.
	Unavailable string
	// KernelHidden: kernel frames could not be named (kallsyms hidden
	// from this user) and are left out.
	KernelHidden bool
	// Targets are the threads traced during the interval.
	Targets []int
	// Refreshes is how many refreshes the shares are over.
	Refreshes int
	// Dropped counts sampled events of the interval not counted (a full
	// map); InterruptWakings the targets' sampled wake-ups in an
	// interrupt, which have no waker stack.
	Dropped, InterruptWakings uint64
	// Attached is the share of the interval the tracer was attached:
	// under 1 on a busy host, where it is attached for a window of each
	// refresh and the samples stand for the whole; 0 where unknown.
	Attached float64
	// Threads holds each target's stacks, by TID.
	Threads map[int]*ThreadStacks
	// Folded is the interval's stacks for flame graphs, when asked for.
	Folded []FoldedStack
}

// AttachStacks gives each thread row of s its stacks, and a hot blocking
// thread whose main blocking stack is in its own code the WHY text
// "blocking: futex 80% in WorkQueue::take".
func AttachStacks(s *Snapshot, st *Stacks) {
	s.Stacks = st
	if st == nil {
		return
	}
	for i := range s.Threads {
		t := &s.Threads[i]
		ts := st.Threads[t.TID]
		if ts == nil || (ts.PID > 0 && ts.PID != t.PID) {
			continue
		}
		t.BlockedAt, t.WokenFrom = ts.BlockedAt, ts.WokenFrom
		if t.HotBlocking() && len(ts.BlockedAt) > 0 && t.Why.Kind == Blocking {
			t.Why.Own = ts.BlockedAt[0].Own
		}
	}
}
