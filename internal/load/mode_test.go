package load

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestModesDescribeThemselves: every mode in the registry says what it is
// and how to run it, so nothing outside its Info has to know its name.
func TestModesDescribeThemselves(t *testing.T) {
	seen := map[Mode]bool{}
	for _, i := range Modes() {
		if seen[i.Mode] {
			t.Errorf("%s is registered twice", i.Mode)
		}
		seen[i.Mode] = true
		if i.Title == "" || i.Help == "" || i.Unit.One == "" || i.Unit.Many == "" || i.Unit.Short == "" {
			t.Errorf("%s: title %q, help %q, unit %+v: want all set", i.Mode, i.Title, i.Help, i.Unit)
		}
		if i.prepare == nil || i.count == nil {
			t.Errorf("%s: no constructor or no count", i.Mode)
		}
		if i.Threaded && (i.MaxCPUs != 0 || i.Walks || i.figures == nil || i.writeFigures == nil) {
			t.Errorf("%s: a threaded mode takes no pinning and no working set, and reports its own figures: %+v", i.Mode, i)
		}
		if !i.Threaded && i.MaxCPUs < 1 {
			t.Errorf("%s: a pair can always be pinned", i.Mode)
		}
		if i.Goroutines != (i.threadsPerUnit == 0) {
			t.Errorf("%s: goroutines %v but %d threads per pair", i.Mode, i.Goroutines, i.threadsPerUnit)
		}
		if got, err := ParseMode(string(i.Mode)); err != nil || got != i.Mode {
			t.Errorf("ParseMode(%q) = %q, %v", i.Mode, got, err)
		}
		if got := i.Mode.Info(); got.Mode != i.Mode || got.Title != i.Title {
			t.Errorf("%s.Info() = %s %q", i.Mode, got.Mode, got.Title)
		}
	}
	if _, ok := Lookup("nope"); ok {
		t.Errorf("Lookup found a mode named nope")
	}
}

// TestModeList: the messages that name which modes take an option come
// from the registry.
func TestModeList(t *testing.T) {
	for _, c := range []struct {
		has  func(Info) bool
		want string
	}{
		{func(i Info) bool { return i.Walks }, "futex, pipe and process modes"},
		{func(i Info) bool { return i.Threaded }, "pool and poll modes"},
		{func(i Info) bool { return i.TakesWork }, "pool mode"},
		{func(Info) bool { return false }, "no mode"},
	} {
		if got := ModeList(c.has); got != c.want {
			t.Errorf("ModeList = %q, want %q", got, c.want)
		}
	}
}

// TestRunnerProcs: the workload process has a P for every thread that
// blocks holding one, and two more; goroutine mode takes what it is given.
func TestRunnerProcs(t *testing.T) {
	got := map[Mode]int{}
	for _, cfg := range []Config{
		{Mode: ModeFutex, Pairs: 3}, {Mode: ModePipe, Pairs: 3}, {Mode: ModeProcess, Pairs: 3},
		{Mode: ModeSyscall, Pairs: 3}, {Mode: ModePool, Threads: 5}, {Mode: ModePoll, Threads: 5},
		{Mode: ModeGoroutine, Pairs: 3, GoMaxProcs: 7},
	} {
		if err := cfg.normalize(); err != nil {
			t.Fatal(err)
		}
		got[cfg.Mode] = runnerProcs(cfg)
	}
	want := map[Mode]int{ModeFutex: 8, ModePipe: 8, ModeProcess: 5, ModeSyscall: 5, ModePool: 7, ModePoll: 7, ModeGoroutine: 7}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GOMAXPROCS of the workload process (-want +got)\n%s", diff)
	}
}

// TestThreadedSummaries: a pool's and a poller's summaries count their own
// units, in their own words.
func TestThreadedSummaries(t *testing.T) {
	wait, migr := 0.25, 0.5
	for _, c := range []struct {
		s    Summary
		want string
	}{
		{Summary{Mode: ModePool, Pairs: 1, DurationS: 2, Threads: 4, Items: 40000, WorkNs: 100e3, ItemsPerSec: 20000,
			InvoluntaryPerSec: 300, SwitchesVoluntary: 20, RunQueueWaitShare: &wait, MigrationsPerRoundTrip: &migr}, `
pool, 4 threads, 100µs work items, 2.00s: 40,000 items
  20,000 items/s (5,000 per thread)
  300 involuntary switches/s over the pool's threads (kernel-counted; 10 voluntary/s)
  run-queue wait: 25.0% of the threads' time runnable but waiting for a CPU (schedstat)
  wake-up IPIs: unknown (/proc/interrupts unreadable); 0.5000 migrations per item
`},
		{Summary{Mode: ModePoll, Pairs: 1, DurationS: 2, Threads: 2, Wakeups: 800, PeriodNs: 5e6, WakeupsPerSec: 400,
			WakeupsPerSecPerThread: 200, ExpectedWakeupsPerSec: 400, SwitchesVoluntary: 800, VoluntaryPerSecPerThread: 200,
			MigrationsPerRoundTrip: &migr}, `
poll, 2 threads, each waking every 5ms, 2.00s: 800 wake-ups
  400 wake-ups/s, 200 per thread (the period promises 400, 200 per thread)
  200 voluntary switches/s per thread (kernel-counted), 1.00 per wake-up; 0 involuntary/s in all
  wake-up IPIs: unknown (/proc/interrupts unreadable); 0.5000 migrations per wake-up
`},
	} {
		var b strings.Builder
		WriteSummary(&b, c.s)
		if diff := cmp.Diff(c.want, b.String()); diff != "" {
			t.Errorf("%s summary (-want +got)\n%s", c.s.Mode, diff)
		}
		if got, want := c.s.Units(), c.s.Items+c.s.Wakeups; got != want {
			t.Errorf("%s: Units() = %d, want %d", c.s.Mode, got, want)
		}
	}
}

// TestPartialSummary: a run whose workload process died without its
// summary still gives what is known here, in the mode's own units.
func TestPartialSummary(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want func(Summary) bool
	}{
		{Config{Mode: ModePool, Threads: 2, Duration: time.Minute}, func(s Summary) bool {
			return s.Items == 4000 && s.ItemsPerSec == 2000 && s.Threads == 2 && s.WorkNs == float64(DefaultWork) && s.RoundTrips == 0
		}},
		{Config{Mode: ModePoll, Threads: 2, Duration: time.Minute}, func(s Summary) bool {
			return s.Wakeups == 4000 && s.WakeupsPerSec == 2000 && s.ExpectedWakeupsPerSec == 400 && s.VoluntaryPerSecPerThread == 0
		}},
		{Config{Mode: ModeFutex, Pairs: 2}, func(s Summary) bool {
			return s.RoundTrips == 4000 && s.NsPerRoundTrip == 1e6 && s.Items == 0
		}},
	} {
		if err := c.cfg.normalize(); err != nil {
			t.Fatal(err)
		}
		var done atomic.Uint64
		done.Store(4000)
		r := &Run{cfg: c.cfg, units: c.cfg.units(), counts: []*atomic.Uint64{&done}, mem: make([]byte, memSlots)}
		// Two seconds of CLOCK_MONOTONIC between the start and the end.
		memWord(r.mem, memStart).Store(1)
		memWord(r.mem, memEnd).Store(1 + 2e9)
		s := r.partial()
		if !c.want(s) {
			t.Errorf("%s: partial summary %+v", c.cfg.Mode, s)
		}
	}
}
