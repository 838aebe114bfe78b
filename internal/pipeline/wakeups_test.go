package pipeline

import (
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/waketrace"
)

// needCollector returns a wake-up collector that is off, or skips where
// the programs cannot run, except under CI (root with BTF), where they
// must.
func needCollector(t *testing.T) *waketrace.Collector {
	t.Helper()
	if err := waketrace.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("path: BPF unavailable under CI: %v", err)
		}
		t.Skipf("path: skipped, %v", err)
	}
	t.Log("path: real BPF programs")
	c := waketrace.NewCollector()
	t.Cleanup(c.Close)
	return c
}

// pausedPingPong starts the ping-pong workload and returns a function that
// holds it stopped (SIGSTOP) for d, so that its rate is not the same over
// the tracer's time and the threads' unless the two are the same time.
func pausedPingPong(t *testing.T) (pid int, tids []int, pause func(time.Duration)) {
	t.Helper()
	pid, tids = testutil.StartPingPong(t)
	// Runs before the workload's own cleanup, which a stopped process
	// would not obey.
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	return pid, tids, func(d time.Duration) {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
}

// pairVersusVoluntary is the wake-ups of the ping-pong's two threads, by
// any waker, over their voluntary switches, both as the snapshot gives
// them: each such switch is a sleep some wake-up ended, mostly the other
// side's, but also the Go runtime's when a side coming back from its read
// waits for a P. ok is false when the snapshot has no wake-up figures.
func pairVersusVoluntary(t *testing.T, s *model.Snapshot, tids []int) (ratio float64, ok bool) {
	t.Helper()
	var vol float64
	for _, th := range s.Threads {
		if slices.Contains(tids, th.TID) {
			vol += th.VoluntaryPerSec
		}
	}
	if s.Wakeups == nil {
		return 0, false
	}
	if s.Wakeups.Unavailable != "" {
		t.Fatalf("wake-ups unavailable: %s", s.Wakeups.Unavailable)
	}
	var woken, pair float64
	for _, p := range s.Wakeups.Pairs {
		if slices.Contains(tids, p.WakeeTID) {
			woken += p.PerSec
			if slices.Contains(tids, p.WakerTID) {
				pair += p.PerSec
			}
		}
	}
	if vol < 1000 {
		t.Fatalf("the ping-pong made only %.0f voluntary switches/s over %v", vol, s.Interval)
	}
	t.Logf("interval %v: %.0f wake-ups/s of the two threads (%.0f by each other), %.0f voluntary switches/s: ratio %.3f", s.Interval, woken, pair, vol, woken/vol)
	return woken / vol, true
}

// The bounds of one interval's ratio. Over a whole run the two agree
// within 2% (waketrace's TestAccuracyAgainstLoad); a single interval of a
// load that is not pinned moves by a few percent as the two sides change
// CPUs, because the tracer's read and the threads' are not the same
// instant. The tests below fail by far more when the two cover different
// time.
const intervalLo, intervalHi = 0.9, 1.1

// TestLiveFirstWakeupsCoverTheFirstInterval: the tracer attaches before
// the baseline sample (batch mode, record); what it counted up to the
// baseline must not go into the first interval. Here the ping-pong is
// stopped for that while, so counts from before the baseline would show
// as a rate about half the voluntary switches'.
func TestLiveFirstWakeupsCoverTheFirstInterval(t *testing.T) {
	col := needCollector(t)
	pid, tids, pause := pausedPingPong(t)
	col.SetEnabled(true)
	if err := col.Err(); err != nil {
		t.Fatal(err)
	}
	pause(500 * time.Millisecond)
	l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{pid}}, Interval: 400 * time.Millisecond, Wakeups: col})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	time.Sleep(400 * time.Millisecond)
	s, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	r, ok := pairVersusVoluntary(t, &s, tids)
	if !ok {
		t.Fatal("the first interval has no wake-up figures, though the tracer was attached before the baseline")
	}
	if r < intervalLo || r > intervalHi {
		t.Errorf("first interval: wake-ups %.3f of the voluntary switches, want %.2f–%.2f", r, intervalLo, intervalHi)
	}
}

// TestLiveWakeupsAttachedMidIntervalWaitForAWholeOne: a tracer attached
// between two samples (the TUI's W) counted only part of the interval;
// its figures must wait for the first whole one, not stand beside the
// threads' rates over the whole interval. The ping-pong is stopped for the
// part before the attach, so a rate over the part alone would be about
// twice the voluntary switches'.
func TestLiveWakeupsAttachedMidIntervalWaitForAWholeOne(t *testing.T) {
	col := needCollector(t)
	pid, tids, pause := pausedPingPong(t)
	l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{pid}}, Interval: 400 * time.Millisecond, Wakeups: col})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pause(400 * time.Millisecond)
	col.SetEnabled(true)
	if err := col.Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	whole := 0
	for i := range 3 {
		s, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		r, ok := pairVersusVoluntary(t, &s, tids)
		switch {
		case !ok && i > 0:
			t.Errorf("interval %d after the attach has no wake-up figures", i)
		case ok && (r < intervalLo || r > intervalHi):
			t.Errorf("interval %d after the attach: wake-ups %.3f of the voluntary switches, want %.2f–%.2f", i, r, intervalLo, intervalHi)
		case ok:
			whole++
		}
		time.Sleep(400 * time.Millisecond)
	}
	if whole < 2 {
		t.Errorf("%d intervals of 3 after the attach had figures, want 2", whole)
	}
}

// A replayed read's start is its sample's wall clock time plus an offset,
// so it may miss the read before by the slew NTP put between the two
// samples; a start elsewhere (an attach mid-interval) is a new one.
func TestContinues(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	before := &model.WakeupSample{Time: t0}
	for _, tc := range []struct {
		name  string
		since time.Time
		want  bool
	}{
		{"the same instant", t0, true},
		{"start not known", time.Time{}, true},
		{"0.4 ms late", t0.Add(400 * time.Microsecond), true},
		{"0.4 ms early", t0.Add(-400 * time.Microsecond), true},
		{"1.5 ms late over 1 s (0.05%)", t0.Add(1500 * time.Microsecond), true},
		{"3 ms late", t0.Add(3 * time.Millisecond), false},
		{"attached 300 ms later", t0.Add(300 * time.Millisecond), false},
		{"300 ms early", t0.Add(-300 * time.Millisecond), false},
	} {
		w := &model.WakeupSample{Time: t0.Add(time.Second), Since: tc.since}
		if got := continues(before, w); got != tc.want {
			t.Errorf("%s: continues = %v, want %v", tc.name, got, tc.want)
		}
	}
}
