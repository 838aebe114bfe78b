package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPacerSkipsMissedTicks(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	p := NewPacer(time.Second, start)
	for _, c := range []struct {
		name      string
		now, last int
		want      int
	}{
		{"on time", 1010, 1000, 2000},
		{"a slow pass ends past the next tick: skip it", 2300, 1000, 3000},
		{"after a 5 s stop, the next tick after now", 7100, 2000, 8000},
		{"served late, the next tick is too close: skip it too", 2700, 2600, 4000},
		{"exactly half an interval is allowed", 2500, 2500, 3000},
		{"before the grid starts", -50, -100, 1000},
	} {
		if got := p.Next(at(c.now), at(c.last)); !got.Equal(at(c.want)) {
			t.Errorf("%s: Next(%d, %d) = %v, want %d ms", c.name, c.now, c.last, got.Sub(start).Milliseconds(), c.want)
		}
	}
}

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
