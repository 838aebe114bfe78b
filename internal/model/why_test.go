package model

import "testing"

func TestWhyString(t *testing.T) {
	futexPipe := []WaitShare{{"futex", 0.8}, {"pipe", 0.2}}
	for _, tc := range []struct {
		why  Why
		want string
	}{
		{Why{}, ""},
		{Why{Kind: Blocking, HasWait: true, Wait: 3}, "blocking, wait 3%"},
		{Why{Kind: Preempted, HasWait: true, Wait: 100}, "preempted, wait 100%"},
		// A process's summed wait passes the table.
		{Why{Kind: Blocking, HasWait: true, Wait: 236}, "blocking, wait 236%"},
		{Why{Kind: Blocking, HasWait: true, Wait: 2, On: futexPipe}, "blocking: futex 80%, pipe 20%"},
		{Why{Kind: Blocking, HasWait: true, Wait: 2, On: futexPipe, Own: "WorkQueue::take"}, "blocking: futex 80%, pipe 20% in WorkQueue::take"},
		{Why{Kind: Blocking, HasWait: true, Wait: 7, Own: "WorkQueue::take"}, "blocking, wait 7% in WorkQueue::take"},
		// Only blocking names its own frame and its shares.
		{Why{Kind: Preempted, HasWait: true, Wait: 7, On: futexPipe, Own: "WorkQueue::take"}, "preempted, wait 7%"},
		{Why{Kind: Preempted, HasWait: true, Wait: 18, Throttled: 43, InThrottled: true}, "preempted (cgroup throttled 43%)"},
		{Why{Kind: Throttled, Throttled: 45}, "throttled 45%"},
		{Why{Kind: Blocking}, "blocking"},
		{Why{Kind: Preempted}, "preempted"},
	} {
		if got := tc.why.String(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.why, got, tc.want)
		}
	}
}

// TestAttachStacksNamesOwnFrameOfBlockingOnly: the own frame goes on a hot
// blocking thread's WHY, never on a preempted one's.
func TestAttachStacksNamesOwnFrameOfBlockingOnly(t *testing.T) {
	s := Snapshot{Threads: []ThreadRates{
		{PID: 1, TID: 1, VoluntaryPerSec: 5000, Hot: true, Why: Why{Kind: Blocking, HasWait: true, Wait: 1}},
		{PID: 1, TID: 2, VoluntaryPerSec: 5000, InvoluntaryPerSec: 5000, Hot: true,
			Why: Why{Kind: Preempted, Throttled: 40, InThrottled: true}},
	}}
	at := []StackShare{{Frames: []string{"futex_wait", "WorkQueue::take"}, Own: "WorkQueue::take"}}
	AttachStacks(&s, &Stacks{Threads: map[int]*ThreadStacks{1: {PID: 1, BlockedAt: at}, 2: {PID: 1, BlockedAt: at}}})
	if got, want := s.Threads[0].Why.String(), "blocking, wait 1% in WorkQueue::take"; got != want {
		t.Errorf("blocking thread: got %q, want %q", got, want)
	}
	if got, want := s.Threads[1].Why.String(), "preempted (cgroup throttled 40%)"; got != want || s.Threads[1].Why.Own != "" {
		t.Errorf("preempted thread: got %q own %q, want %q and no frame", got, s.Threads[1].Why.Own, want)
	}
}
