package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Shares weigh each sample by the events it stands for: a thread sampled
// at every event in one read (10 samples at A) and one in 10 in the next,
// as its rate rose (1 sample at B standing for 10 events), blocked as
// often at B as at A. Counting samples would say 91% A.
func TestStackSharesAreWeighted(t *testing.T) {
	w := NewStackWindow(StackOptions{})
	at := time.Unix(100, 0)
	a := Stack{Frames: []string{"futex_wait", "take"}, KernelFrames: 1, Own: "take"}
	b := Stack{Frames: []string{"pipe_read", "reader"}, KernelFrames: 1, Own: "reader", Truncated: "stack copy too short"}
	w.Observe(&StackSample{Time: at, Blocked: []StackCount{{TID: 7, PID: 7, Stack: a, Count: 10, Weight: 10}}})
	s := &StackSample{Time: at.Add(time.Second), Blocked: []StackCount{{TID: 7, PID: 7, Stack: b, Count: 1, Weight: 10}}}
	w.Observe(s)
	got := w.Stacks(s, nil).Threads[7].BlockedAt
	want := []StackShare{
		{Frames: a.Frames, KernelFrames: 1, Own: "take", Count: 10, Share: 0.5},
		{Frames: b.Frames, KernelFrames: 1, Own: "reader", Count: 1, Share: 0.5, Truncated: "stack copy too short"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("blocked at (-want +got):\n%s", diff)
	}
	// A recording from before weights were kept: counts stand for themselves.
	w.Reset()
	old := &StackSample{Time: at, Blocked: []StackCount{{TID: 7, PID: 7, Stack: a, Count: 3}, {TID: 7, PID: 7, Stack: b, Count: 1}}}
	w.Observe(old)
	if got := w.Stacks(old, nil).Threads[7].BlockedAt; len(got) != 2 || got[0].Share != 0.75 {
		t.Errorf("unweighted shares: %+v, want 0.75 first", got)
	}
}
