package stacks

import (
	"testing"
	"time"
)

func TestDuty(t *testing.T) {
	for _, c := range []struct {
		perSec   float64
		interval time.Duration
		want     int
	}{
		{0, time.Second, 1},
		{99_999, time.Second, 1},
		{100_000, time.Second, 1},
		{200_000, time.Second, 2},
		{300_000, time.Second, 3},
		{600_000, time.Second, 4},
		{5e6, time.Second, 4},
		// A short refresh keeps windows of at least minWindow.
		{600_000, 500 * time.Millisecond, 4},
		{600_000, 300 * time.Millisecond, 2},
		{600_000, 100 * time.Millisecond, 1},
	} {
		if got := duty(c.perSec, c.interval); got != c.want {
			t.Errorf("duty(%.0f, %v) = %d, want %d", c.perSec, c.interval, got, c.want)
		}
	}
}

// TestDutyScale: the scale of a read is the time since the last read over
// the time attached in it, exactly 1 when attached throughout.
func TestDutyScale(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var d dutyState
	d.reset(t0, false)
	d.set(t0, true)
	check := func(what string, now time.Time, scale, attached float64) {
		t.Helper()
		if s, a := d.scale(now); s != scale || a != attached {
			t.Errorf("%s: scale %v, attached %v; want %v, %v", what, s, a, scale, attached)
		}
	}
	check("attached throughout", t0.Add(time.Second), 1, 1)
	// Detached at once, a window of 250 ms in the middle of the next second.
	at := t0.Add(time.Second)
	d.set(at, false)
	d.set(at.Add(300*time.Millisecond), true)
	d.set(at.Add(550*time.Millisecond), false)
	check("a 250 ms window in 1 s", at.Add(time.Second), 4, 0.25)
	// A window that runs on past the read counts in both reads.
	at = at.Add(time.Second)
	d.set(at.Add(800*time.Millisecond), true)
	check("attached the last 200 ms of 1 s", at.Add(time.Second), 5, 0.2)
	at = at.Add(time.Second)
	d.set(at.Add(300*time.Millisecond), false)
	check("attached the first 300 ms of 600 ms", at.Add(600*time.Millisecond), 2, 0.5)
	// Never attached: nothing was seen, nothing to scale.
	at = at.Add(600 * time.Millisecond)
	check("never attached", at.Add(time.Second), 1, 0)
	if got := scaled(7, 1); got != 7 {
		t.Errorf("scaled(7, 1) = %d", got)
	}
	if got := scaled(7, 4.0/3); got != 9 {
		t.Errorf("scaled(7, 4/3) = %d, want 9", got)
	}
}
