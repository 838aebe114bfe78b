package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// short is how long each mode runs in these tests: long enough for
// hundreds of round trips on a slow, busy CI machine, short enough to keep
// the package under a minute.
const short = 200 * time.Millisecond

func firstCPU(t *testing.T) int {
	t.Helper()
	allowed, err := AllowedCPUs()
	if err != nil || len(allowed) == 0 {
		t.Fatalf("AllowedCPUs: %v, %v", allowed, err)
	}
	return allowed[0]
}

func runFor(t *testing.T, cfg Config) Summary {
	t.Helper()
	r, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start(%+v): %v", cfg, err)
	}
	select {
	case <-r.Done():
	case <-time.After(30 * time.Second):
		t.Errorf("Start(%+v): Done not closed after 30 s", cfg)
	}
	return r.Stop()
}

// TestSwitchesPerRoundTripOneCPU checks the kernel's counts against the
// protocol. Pinned to one CPU, each side must block once per round trip to
// let the other run, so the kernel counts two voluntary switches per trip
// (the sleeper's) plus involuntary ones only when a waker is preempted by
// the side it woke before reaching its own wait; either way a trip is one
// switch away from each side and one back. 1.5 leaves room for a side that
// finds the word already flipped and never sleeps; 3 for the preemptions a
// busy CI machine adds.
func TestSwitchesPerRoundTripOneCPU(t *testing.T) {
	cpu := firstCPU(t)
	for _, m := range []Mode{ModeFutex, ModePipe, ModeProcess} {
		s := runFor(t, Config{Mode: m, CPUs: []int{cpu}, Duration: short})
		t.Logf("%s: %d round trips, %.0f ns each, %.2f switches each (%d voluntary, %d involuntary)",
			m, s.RoundTrips, s.NsPerRoundTrip, s.SwitchesPerRoundTrip, s.SwitchesVoluntary, s.SwitchesInvoluntary)
		if s.RoundTrips < 100 {
			t.Errorf("%s: %d round trips in %v", m, s.RoundTrips, short)
			continue
		}
		if s.SwitchesPerRoundTrip < 1.5 || s.SwitchesPerRoundTrip > 3 {
			t.Errorf("%s on one CPU: %.2f switches per round trip, want 1.5-3", m, s.SwitchesPerRoundTrip)
		}
		if s.NsPerSwitch <= 0 || s.NsPerRoundTrip <= 0 {
			t.Errorf("%s: ns per switch %v, per round trip %v", m, s.NsPerSwitch, s.NsPerRoundTrip)
		}
		if s.Migrations != nil && *s.Migrations > 4 {
			// Pinned threads may move once, onto their CPU, after they
			// start; the child and the parent's thread each at most once.
			t.Errorf("%s pinned: %d migrations", m, *s.Migrations)
		}
	}
}

// TestSwitchesUnpinned: across CPUs a wake-up may find the other side not
// yet asleep, so fewer than two switches per trip is right; but no side
// blocks more than once a trip, so more than 4 (2 plus a preemption of each
// side every trip) means the count is not the workload's.
func TestSwitchesUnpinned(t *testing.T) {
	for _, m := range []Mode{ModeFutex, ModePipe, ModeProcess} {
		s := runFor(t, Config{Mode: m, Duration: short})
		t.Logf("%s: %d round trips, %.2f switches each", m, s.RoundTrips, s.SwitchesPerRoundTrip)
		if s.RoundTrips < 50 {
			t.Errorf("%s: %d round trips in %v", m, s.RoundTrips, short)
		}
		if s.SwitchesPerRoundTrip <= 0.2 || s.SwitchesPerRoundTrip > 4 {
			t.Errorf("%s unpinned: %.2f switches per round trip, want 0.2-4", m, s.SwitchesPerRoundTrip)
		}
	}
}

// TestSyscallBaseline: getppid never blocks, so the thread makes next to no
// voluntary switches against tens of thousands of calls. Involuntary ones
// depend on what else wants CPU 0 (other test packages run in parallel), so
// they only have to stay an order of magnitude under the ~2 per round trip
// of the modes that really switch.
func TestSyscallBaseline(t *testing.T) {
	s := runFor(t, Config{Mode: ModeSyscall, CPUs: []int{firstCPU(t)}, Duration: short})
	if s.RoundTrips < 10000 {
		t.Errorf("%d system calls in %v", s.RoundTrips, short)
	}
	if v := float64(s.SwitchesVoluntary) / float64(s.RoundTrips); v > 0.001 {
		t.Errorf("%.5f voluntary switches per system call, want about 0", v)
	}
	if s.SwitchesPerRoundTrip > 0.1 {
		t.Errorf("%.4f switches per system call, want far below 1", s.SwitchesPerRoundTrip)
	}
	if s.NsPerSwitch != 0 {
		t.Errorf("%.0f ns per switch for system calls at %.4f switches each, want 0 (does not apply)", s.NsPerSwitch, s.SwitchesPerRoundTrip)
	}
}

func TestGoroutine(t *testing.T) {
	r, err := Start(Config{Mode: ModeGoroutine, Duration: short})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Progress(); len(p.Threads) != 0 || len(p.PIDs) != 1 {
		t.Errorf("goroutine mode reports threads %v, processes %v", p.Threads, p.PIDs)
	}
	<-r.Done()
	s := r.Stop()
	if s.RoundTrips < 1000 {
		t.Errorf("%d goroutine round trips in %v", s.RoundTrips, short)
	}
	if s.NsPerSwitch != 0 {
		t.Errorf("goroutine mode: %.0f ns per switch at %.4f switches per round trip, want 0 (does not apply)", s.NsPerSwitch, s.SwitchesPerRoundTrip)
	}
	if s.SwitchesCounted != CountedProcess {
		t.Errorf("goroutine mode counts %q, want %q", s.SwitchesCounted, CountedProcess)
	}
}

func TestNsPerSwitch(t *testing.T) {
	for _, c := range []struct{ ns, perTrip, want float64 }{
		{6000, 2, 3000},
		{6000, 1, 6000},
		{300, 0.003, 0}, // goroutine hand-offs: not made of switches
		{250, 0.0001, 0},
		{250, 0, 0},
		{0, 2, 0},
	} {
		if got := NsPerSwitch(c.ns, c.perTrip); got != c.want {
			t.Errorf("NsPerSwitch(%v, %v) = %v, want %v", c.ns, c.perTrip, got, c.want)
		}
	}
}

// TestRoundTrips: a round-trip budget is met exactly, split over pairs.
func TestRoundTrips(t *testing.T) {
	for _, info := range Modes() {
		if info.Threaded {
			continue // they run for a duration
		}
		m := info.Mode
		s := runFor(t, Config{Mode: m, Pairs: 2, RoundTrips: 2001})
		if s.RoundTrips != 2001 || s.Pairs != 2 {
			t.Errorf("%s: %d round trips over %d pairs, want 2001 over 2", m, s.RoundTrips, s.Pairs)
		}
	}
}

// TestStopUnblocks: Stop on a run with no end returns promptly, with every
// side woken from its wait, and leaves no workload thread or child behind.
func TestStopUnblocks(t *testing.T) {
	for _, m := range []Mode{ModeFutex, ModePipe, ModeProcess, ModeSyscall, ModeGoroutine} {
		r, err := Start(Config{Mode: m, Pairs: 2})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		p := r.Progress()
		if p.RoundTrips == 0 || p.Elapsed <= 0 {
			t.Errorf("%s: progress %+v after 50 ms", m, p)
		}
		// Threads for two pairs: two sides each, one for syscall; process
		// mode's pong sides are in partner processes of their own.
		wantThreads := map[Mode]int{ModeFutex: 4, ModePipe: 4, ModeProcess: 4, ModeSyscall: 2, ModeGoroutine: 0}[m]
		if len(p.Threads) != wantThreads {
			t.Errorf("%s with 2 pairs: threads %v", m, p.Threads)
		}
		wantPIDs := map[Mode]int{ModeProcess: 3}[m]
		if wantPIDs == 0 {
			wantPIDs = 1
		}
		if len(p.PIDs) != wantPIDs || slices.Contains(p.PIDs, os.Getpid()) {
			t.Errorf("%s: workload processes %v, want %d other than this one", m, p.PIDs, wantPIDs)
		}
		t0 := time.Now()
		s := r.Stop()
		// The target is 100 ms; a loaded CI machine gets slack.
		t.Logf("%s: Stop took %v", m, time.Since(t0))
		if d := time.Since(t0); d > 2*time.Second {
			t.Errorf("%s: Stop took %v", m, d)
		}
		select {
		case <-r.Done():
		default:
			t.Errorf("%s: Done open after Stop", m)
		}
		if again := r.Stop(); again.RoundTrips != s.RoundTrips {
			t.Errorf("%s: second Stop %d round trips, first %d", m, again.RoundTrips, s.RoundTrips)
		}
		for _, pid := range p.PIDs {
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("%s: workload process %d still there after Stop: %v", m, pid, err)
			}
		}
	}
}

// TestThreadNames: a monitor finds the workload by its threads' names.
func TestThreadNames(t *testing.T) {
	r, err := Start(Config{Mode: ModeFutex})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	var names []string
	for _, th := range r.Progress().Threads {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/comm", th.PID, th.TID))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, strings.TrimSpace(string(b)))
	}
	if strings.Join(names, " ") != "ping-futex pong-futex" {
		t.Errorf("thread names %q, want ping-futex pong-futex", names)
	}
}

func TestPinnedToTwoCPUs(t *testing.T) {
	allowed, _ := AllowedCPUs()
	if len(allowed) < 2 {
		t.Skip("needs two allowed CPUs")
	}
	r, err := Start(Config{Mode: ModePipe, CPUs: []int{allowed[1], allowed[0]}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	threads := r.Progress().Threads
	for i, want := range []int{allowed[1], allowed[0]} {
		var set = new(cpuSet)
		if err := set.of(threads[i].TID); err != nil {
			t.Fatal(err)
		}
		if got := set.list(); len(got) != 1 || got[0] != want {
			t.Errorf("side %d runs on %v, want [%d]", i, got, want)
		}
	}
}

func TestStartErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: "nope"},
		{Mode: ModeFutex, Pairs: -1},
		{Mode: ModeFutex, Duration: -time.Second},
		{Mode: ModeFutex, CPUs: []int{maxCPU - 1}},
	} {
		if r, err := Start(cfg); err == nil {
			r.Stop()
			t.Errorf("Start(%+v) succeeded", cfg)
		}
	}
}

// TestSecondRun: nothing global stops a run from following another.
func TestSecondRun(t *testing.T) {
	for range 2 {
		if s := runFor(t, Config{Mode: ModeFutex, RoundTrips: 500}); s.RoundTrips != 500 {
			t.Errorf("%d round trips, want 500", s.RoundTrips)
		}
	}
}

// TestWorkloadProcessKilled: a workload process killed mid-run ends the
// run; Stop still returns what is known, the round trips, and says why the
// kernel's counts are missing.
func TestWorkloadProcessKilled(t *testing.T) {
	s, r := killedRun(t, Config{Mode: ModeFutex})
	if s.RoundTrips == 0 || s.Err == "" || strings.Contains(s.Err, "\n") {
		t.Errorf("summary after a kill: %d round trips, error %q", s.RoundTrips, s.Err)
	}
	if p := r.Progress(); p.RoundTrips != s.RoundTrips {
		t.Errorf("progress after Stop: %d round trips, summary %d", p.RoundTrips, s.RoundTrips)
	}
}

// TestKilledPoolAndPollerKeepTheirShape: a killed pool or poller's summary
// still says how many threads did what, not "0 threads, 0 items/s".
func TestKilledPoolAndPollerKeepTheirShape(t *testing.T) {
	s, _ := killedRun(t, Config{Mode: ModePool, Threads: 2, Work: 100 * time.Microsecond})
	if s.Err == "" || s.Items == 0 || s.Threads != 2 || s.WorkNs != 100e3 || s.ItemsPerSec <= 0 {
		t.Errorf("killed pool: %+v", s)
	}
	s, _ = killedRun(t, Config{Mode: ModePoll, Threads: 2, Period: time.Millisecond})
	if s.Err == "" || s.Wakeups == 0 || s.Threads != 2 || s.PeriodNs != 1e6 || s.WakeupsPerSec <= 0 || s.ExpectedWakeupsPerSec != 2000 {
		t.Errorf("killed poller: %+v", s)
	}
}

// killedRun starts cfg, kills its workload process after 100 ms and
// returns what Stop says.
func killedRun(t *testing.T, cfg Config) (Summary, *Run) {
	t.Helper()
	r, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	pid := r.Progress().PIDs[0]
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done still open 5 s after the workload process was killed")
	}
	return r.Stop(), r
}

// TestWorkloadProcessSetup: the workload process runs with its collector
// off and no preemption signals, and no thread of it is this process's.
func TestWorkloadProcessSetup(t *testing.T) {
	r, err := Start(Config{Mode: ModePipe})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	pid := r.Progress().PIDs[0]
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(string(env), "\x00")
	for _, want := range []string{"GOGC=off"} {
		if !slices.Contains(vars, want) {
			t.Errorf("workload environment lacks %s", want)
		}
	}
	if !slices.ContainsFunc(vars, func(v string) bool {
		return strings.HasPrefix(v, "GODEBUG=") && strings.Contains(v, "asyncpreemptoff=1")
	}) {
		t.Errorf("workload environment has no GODEBUG=asyncpreemptoff=1")
	}
	if pid == os.Getpid() {
		t.Errorf("the workload runs in this process")
	}
}

// TestKilledRunSaysSwitchesAreUnknown: a workload process killed before its
// summary leaves the kernel's counts unknown; the report must say so, not
// print 0 switches per round trip, and JSON must hold null, not 0.
func TestKilledRunSaysSwitchesAreUnknown(t *testing.T) {
	for _, cfg := range []Config{{Mode: ModeFutex}, {Mode: ModePool, Threads: 2, Work: 100 * time.Microsecond}, {Mode: ModePoll, Threads: 2, Period: time.Millisecond}} {
		s, _ := killedRun(t, cfg)
		if s.SwitchesUnknown == "" {
			t.Errorf("%s killed: SwitchesUnknown empty, want why the counts are missing", cfg.Mode)
		}
		var b strings.Builder
		WriteSummary(&b, s)
		text := b.String()
		if !strings.Contains(text, "switches: unknown") {
			t.Errorf("%s killed: summary does not say the switches are unknown:\n%s", cfg.Mode, text)
		}
		for _, zero := range []string{"0.00 switches per round trip", " 0 voluntary", "0 involuntary switches/s", "0 voluntary switches/s"} {
			if strings.Contains(text, zero) {
				t.Errorf("%s killed: summary prints %q for counts nobody read:\n%s", cfg.Mode, zero, text)
			}
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(js, &got); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"switches_voluntary", "switches_involuntary", "switches_per_round_trip", "ns_per_switch"} {
			if v, ok := got[key]; !ok || v != nil {
				t.Errorf("%s killed: JSON %s = %v (present %v), want null", cfg.Mode, key, v, ok)
			}
		}
		if v, _ := got["switches_unknown"].(string); v == "" {
			t.Errorf("%s killed: JSON switches_unknown = %v, want the reason", cfg.Mode, got["switches_unknown"])
		}
	}
}

// A summary the workload process sent keeps its unknown switches across the
// pipe to ctxtop: null does not come back as a known 0.
func TestUnknownSwitchesSurviveTheRoundTrip(t *testing.T) {
	in := Summary{Mode: ModeFutex, RoundTrips: 10, SwitchesUnknown: "a workload thread's counters could not be read"}
	b, err := json.Marshal(runnerMsg{Summary: &in})
	if err != nil {
		t.Fatal(err)
	}
	var out runnerMsg
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Summary == nil || out.Summary.SwitchesUnknown != in.SwitchesUnknown {
		t.Errorf("after the pipe: %+v, want SwitchesUnknown %q", out.Summary, in.SwitchesUnknown)
	}
}
