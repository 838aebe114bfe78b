package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Run's steps never come closer than MinInterval, however slow a step.
func TestRunNeverStepsBackToBack(t *testing.T) {
	const interval = 40 * time.Millisecond
	var times []time.Time
	err := Run(context.Background(), interval, 8, func() error {
		times = append(times, time.Now())
		if len(times) == 3 {
			// A stall of several intervals, as SIGSTOP gives.
			time.Sleep(5 * interval)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 8 {
		t.Fatalf("%d steps, want 8", len(times))
	}
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < MinInterval(interval) {
			t.Errorf("step %d came %v after the one before, less than half the %v interval", i, gap, interval)
		}
	}
}

func TestRunStops(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	if err := Run(context.Background(), 0, 0, func() error {
		if n++; n == 5 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) || n != 5 {
		t.Errorf("Run = %v after %d steps, want boom after 5", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, time.Hour, 0, func() error { t.Error("stepped after ctx ended"); return nil }); err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
}
