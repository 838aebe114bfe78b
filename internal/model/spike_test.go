package model

import (
	"math"
	"testing"
	"time"
)

func TestSpikeDetector(t *testing.T) {
	d := NewSpikeDetector(5 * time.Minute)
	at := t0
	obs := func(cs float64) Spike {
		at = at.Add(time.Second)
		return d.Observe(at, cs, 8) // 8 CPUs: the per-CPU rule stays out of the way
	}
	for range 4 {
		if s := obs(2000); s.Active {
			t.Fatalf("spike with too little history: %+v", s)
		}
	}
	if s := obs(25000); s.Active {
		t.Errorf("spike with four observations of history: %+v", s)
	}
	if s := obs(19000); s.Active {
		t.Errorf("9.5x the median (2,000) is not a spike: %+v", s)
	}
	// History 2000 x4, 25000, 19000: median 2000.
	if s := obs(20000); !s.Active || s.Reason != "cs/s 10× the 5-min median (2,000)" {
		t.Errorf("10x the median: %+v", s)
	}
	// 10,000 per CPU fires regardless of history.
	fresh := NewSpikeDetector(5 * time.Minute)
	if s := fresh.Observe(t0, 20000, 2); !s.Active || s.Reason != "cs/s 10,000 per CPU ≥ 10,000" {
		t.Errorf("per-CPU rule: %+v", s)
	}
	if s := fresh.Observe(t0, 19999, 2); s.Active {
		t.Errorf("under 10,000 per CPU: %+v", s)
	}
}

func TestSpikeDetectorQuietBoxAndWindow(t *testing.T) {
	d := NewSpikeDetector(time.Minute)
	for i := range 10 {
		d.Observe(t0.Add(time.Duration(i)*time.Second), 30, 2)
	}
	if s := d.Observe(t0.Add(11*time.Second), 400, 2); s.Active {
		t.Errorf("30 -> 400 cs/s on an idle box called a spike: %+v", s)
	}
	// After the window passes, old observations no longer count.
	late := t0.Add(10 * time.Minute)
	if s := d.Observe(late, 5000, 2); s.Active {
		t.Errorf("judged against history older than the window: %+v", s)
	}
	if n := len(d.rates); n != 1 {
		t.Errorf("kept %d observations after the window, want 1", n)
	}
}

func TestSpikeDetectorIgnoresJunkAndSustainedLevels(t *testing.T) {
	d := NewSpikeDetector(time.Minute)
	at := t0
	obs := func(cs float64) Spike {
		at = at.Add(time.Second)
		return d.Observe(at, cs, 64)
	}
	for range 6 {
		obs(2000)
	}
	for _, junk := range []float64{math.NaN(), math.Inf(1), -5} {
		if s := obs(junk); s.Active {
			t.Errorf("Observe(%v) = %+v", junk, s)
		}
	}
	if n := len(d.rates); n != 6 {
		t.Errorf("kept %d observations, want the 6 real ones", n)
	}
	if s := obs(30000); !s.Active {
		t.Error("15x the median after junk observations is not a spike")
	}
	// Once the high level holds for more than half the window it is the
	// median, and no longer a spike.
	var last Spike
	for range 10 {
		last = obs(30000)
	}
	if last.Active {
		t.Errorf("a sustained level still reported: %+v", last)
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 1234567.8: "1,234,568", -4321: "-4,321"} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", in, got, want)
		}
	}
}
