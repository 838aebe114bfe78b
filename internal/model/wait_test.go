package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/waitreason"
)

func TestComputeWaitShares(t *testing.T) {
	prev := sample(0, task(1, 2, 5, 0, 0, 0, 0), task(1, 3, 5, 0, 0, 0, 0), task(1, 4, 5, 0, 0, 0, 0))
	cur := sample(time.Second, task(1, 2, 5, 5000, 10, 1e8, 0), task(1, 3, 5, 100, 5000, 1e8, 0), task(1, 4, 5, 5000, 0, 1e8, 0))
	cur.Waits = []WaitTally{
		{PID: 1, TID: 2, Looks: 10, Reasons: []ReasonCount{{"pipe read", 1}, {"futex wait", 6}, {"pipe write", 1}},
			Wchan: "futex_do_wait", Syscall: "202 0x1 0x80"},
		// preempted: shares kept, reason not rewritten
		{PID: 1, TID: 3, Looks: 10, Reasons: []ReasonCount{{"sleep", 2}}},
		// looked at, always running: no shares
		{PID: 1, TID: 4, Looks: 10},
	}
	s := Compute(prev, cur, Options{HotThreshold: 1000, ShortReason: waitreason.Short})
	got := map[int]ThreadRates{}
	for _, th := range s.Threads {
		got[th.TID] = th
	}
	if diff := cmp.Diff([]WaitShare{{"futex wait", 0.75}, {"pipe read", 0.125}, {"pipe write", 0.125}}, got[2].WaitOn); diff != "" {
		t.Errorf("TID 2 shares (-want +got)\n%s", diff)
	}
	if want := "blocking: futex 75%, pipe 25%"; got[2].Why.String() != want {
		t.Errorf("TID 2 reason %q, want %q", got[2].Why.String(), want)
	}
	if got[2].Wchan != "futex_do_wait" || got[2].Syscall != "202 0x1 0x80" {
		t.Errorf("TID 2 raw looks %q %q", got[2].Wchan, got[2].Syscall)
	}
	if want := "preempted, wait 0%"; got[3].Why.String() != want || len(got[3].WaitOn) != 1 {
		t.Errorf("TID 3 = %q %v, want %q with its share", got[3].Why.String(), got[3].WaitOn, want)
	}
	if want := "blocking, wait 0%"; got[4].Why.String() != want || got[4].WaitOn != nil {
		t.Errorf("TID 4 = %q %v, want %q and no shares", got[4].Why.String(), got[4].WaitOn, want)
	}
}

func TestBlockingReasonCutsSmallShares(t *testing.T) {
	got := Why{Kind: Blocking, On: blockingShares([]WaitShare{{"futex wait", 0.6}, {"sleep", 0.2}, {"epoll wait", 0.12}, {"poll", 0.05}, {"I/O", 0.03}}, waitreason.Short)}.String()
	if want := "blocking: futex 60%, sleep 20%, epoll 12%"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = Why{Kind: Blocking, On: blockingShares([]WaitShare{{"other: msleep", 1}}, waitreason.Short)}.String()
	if want := "blocking: msleep 100%"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
