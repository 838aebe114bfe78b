package load

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// threadsSwitches sums the kernel's counters over a run's threads now.
func threadsSwitches(t *testing.T, r *Run) Counters {
	t.Helper()
	sum := Counters{}
	for _, th := range r.Progress().Threads {
		c, err := ReadCounters("/proc", th.PID, th.TID)
		if err != nil {
			t.Fatalf("reading thread %d of %d: %v", th.TID, th.PID, err)
		}
		sum = sum.add(c)
	}
	return sum
}

// watchRun starts cfg with no end, reads its threads' counters 50 ms in
// and again watch later, stops it, and returns the difference and the
// summary: what the run reports must hold at least what the test saw the
// kernel count. end is the threads' counters since they started, read just
// before the stop.
func watchRun(t *testing.T, cfg Config, watch time.Duration) (seen, end Counters, s Summary) {
	t.Helper()
	cfg.Duration = 0
	r, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start(%+v): %v", cfg, err)
	}
	time.Sleep(50 * time.Millisecond)
	c0 := threadsSwitches(t, r)
	time.Sleep(watch)
	c1 := threadsSwitches(t, r)
	s = r.Stop()
	return c1.sub(c0), c1, s
}

// TestPoolCounts: the pool's reported items are what its threads' CPU time
// (the kernel's schedstat) allows, and its reported involuntary switches
// hold at least those the test saw the kernel count during the run.
func TestPoolCounts(t *testing.T) {
	cfg := Config{Mode: ModePool, Threads: 3, Work: 200 * time.Microsecond}
	seen, _, s := watchRun(t, cfg, 250*time.Millisecond)
	t.Logf("%d items, %.0f/s, %.0f involuntary/s, cpu %.3fs, run-queue wait %.2f; test saw %d involuntary",
		s.Items, s.ItemsPerSec, s.InvoluntaryPerSec, s.CPUS, deref(s.RunQueueWaitShare), seen.Involuntary)
	if s.Items < 50 || s.Threads != 3 || s.WorkNs != 200e3 {
		t.Fatalf("summary %+v", s)
	}
	// Each item is 200 µs of one thread's CPU time, calibrated in the
	// workload process; frequency changes and cache misses on a busy
	// machine move it, but not by half.
	if ratio := float64(s.Items) * 200e-6 / s.CPUS; ratio < 0.5 || ratio > 1.5 {
		t.Errorf("%d items of 200 µs in %.3f s of CPU time: ratio %.2f, want 0.5-1.5", s.Items, s.CPUS, ratio)
	}
	if s.SwitchesInvoluntary < seen.Involuntary {
		t.Errorf("reported %d involuntary switches, the kernel counted %d during part of the run", s.SwitchesInvoluntary, seen.Involuntary)
	}
	if d := s.InvoluntaryPerSec - float64(s.SwitchesInvoluntary)/s.DurationS; d > 1 || d < -1 {
		t.Errorf("involuntary/s %.1f for %d over %.2f s", s.InvoluntaryPerSec, s.SwitchesInvoluntary, s.DurationS)
	}
	// CPU-bound threads never block for work, so voluntary switches are
	// few: the runtime's own hand-offs at most.
	if s.SwitchesVoluntary > s.Items/10+20 {
		t.Errorf("%d voluntary switches for %d items of pure CPU work", s.SwitchesVoluntary, s.Items)
	}
	if s.RunQueueWaitShare == nil || *s.RunQueueWaitShare < 0 || *s.RunQueueWaitShare > 1 {
		t.Errorf("run-queue wait share %v", s.RunQueueWaitShare)
	}
}

// TestPollCounts: a poller wakes once per period per thread, no more, and
// the kernel counts one voluntary switch (the sleep) per wake-up.
func TestPollCounts(t *testing.T) {
	cfg := Config{Mode: ModePoll, Threads: 4, Period: 5 * time.Millisecond}
	seen, end, s := watchRun(t, cfg, 300*time.Millisecond)
	// Deadlines are absolute, so a late wake-up never adds one; but a
	// thread kept off the CPU for more than a period loses the periods it
	// waited through. Beside two CPU hogs the pollers spent much of the
	// run waiting on the run queue and woke 491 times a second of 800.
	// The kernel's run-queue wait of the threads (schedstat, over the
	// whole run but the stop; none where schedstat is absent) is what the
	// run could lose.
	lost := float64(end.WaitNs) / float64(cfg.Period.Nanoseconds()) / s.DurationS
	allowed := s.ExpectedWakeupsPerSec - lost
	t.Logf("%d wake-ups, %.0f/s (expected %.0f, %.0f once the %.3f s waiting for a CPU is taken off), %.1f voluntary/s per thread; test saw %d voluntary",
		s.Wakeups, s.WakeupsPerSec, s.ExpectedWakeupsPerSec, allowed, float64(end.WaitNs)/1e9, s.VoluntaryPerSecPerThread, seen.Voluntary)
	if s.ExpectedWakeupsPerSec != 800 {
		t.Errorf("expected wake-ups/s %v, want 4 threads / 5 ms = 800", s.ExpectedWakeupsPerSec)
	}
	if r := s.WakeupsPerSec / s.ExpectedWakeupsPerSec; r > 1.05 {
		t.Errorf("%.0f wake-ups/s, expected %.0f: ratio %.2f, want at most 1.05", s.WakeupsPerSec, s.ExpectedWakeupsPerSec, r)
	}
	if r := s.WakeupsPerSec / allowed; r < 0.5 {
		t.Errorf("%.0f wake-ups/s, %.0f allowed by the time the threads were off the CPU: ratio %.2f, want at least 0.5", s.WakeupsPerSec, allowed, r)
	}
	if r := float64(s.SwitchesVoluntary) / float64(s.Wakeups); r < 0.9 || r > 1.5 {
		t.Errorf("%d voluntary switches for %d wake-ups: %.2f each, want 0.9-1.5", s.SwitchesVoluntary, s.Wakeups, r)
	}
	if s.SwitchesVoluntary < seen.Voluntary {
		t.Errorf("reported %d voluntary switches, the kernel counted %d during part of the run", s.SwitchesVoluntary, seen.Voluntary)
	}
	if r := s.VoluntaryPerSecPerThread / s.WakeupsPerSecPerThread; r < 0.9 || r > 1.5 {
		t.Errorf("%.1f voluntary switches/s per thread for %.1f wake-ups/s", s.VoluntaryPerSecPerThread, s.WakeupsPerSecPerThread)
	}
}

// TestWorkingSet: a bigger working set takes longer to walk, the net
// figure is the round trip less the walks, and each side still blocks once
// per round trip (the kernel's count).
func TestWorkingSet(t *testing.T) {
	cpu := firstCPU(t)
	var walks []float64
	for _, m := range []Mode{ModeFutex, ModePipe, ModeProcess} {
		for _, ws := range []int64{64 << 10, 1 << 20} {
			s := runFor(t, Config{Mode: m, CPUs: []int{cpu}, WorkingSet: ws, Duration: short})
			t.Logf("%s %s: %.0f ns per round trip, walks %.0f ns, net %.0f ns, %.2f switches each",
				m, FormatSize(ws), s.NsPerRoundTrip, s.WalkNsPerRoundTrip, s.NsPerRoundTripNet, s.SwitchesPerRoundTrip)
			if s.WorkingSet != ws || s.RoundTrips == 0 {
				t.Errorf("%s %s: working set %d, %d round trips", m, FormatSize(ws), s.WorkingSet, s.RoundTrips)
				continue
			}
			// One touch per 64-byte line: at least a cycle (0.1 ns) each.
			if s.WalkNsPerRoundTrip < float64(2*ws/cacheLine)*0.1 {
				t.Errorf("%s %s: both walks took %.0f ns", m, FormatSize(ws), s.WalkNsPerRoundTrip)
			}
			if d := s.NsPerRoundTrip - s.WalkNsPerRoundTrip - s.NsPerRoundTripNet; d > 1 || d < -1 {
				t.Errorf("%s: net %.0f ≠ %.0f − %.0f", m, s.NsPerRoundTripNet, s.NsPerRoundTrip, s.WalkNsPerRoundTrip)
			}
			// Each side blocks once a round trip; a walk of tens of µs is
			// also preempted now and then on a busy machine, hence 5. A
			// machine so busy that only a few round trips ran in the time
			// gives no ratio worth judging.
			if s.RoundTrips >= 50 && (s.SwitchesPerRoundTrip < 1.5 || s.SwitchesPerRoundTrip > 5) {
				t.Errorf("%s %s on one CPU: %.2f switches per round trip, want 1.5-5", m, FormatSize(ws), s.SwitchesPerRoundTrip)
			}
			if m == ModeFutex {
				walks = append(walks, s.WalkNsPerRoundTrip)
			}
		}
	}
	if len(walks) == 2 && walks[1] < 4*walks[0] {
		t.Errorf("walking 1M took %.0f ns, 64K %.0f ns: want at least 4× for 16× the lines", walks[1], walks[0])
	}
}

// TestIPIsCounted: the run's wake-up IPIs are a share of the machine's
// over the same time, never more, and per round trip is their sum over
// the round trips.
func TestIPIsCounted(t *testing.T) {
	before, ok := readIPIs()
	if !ok {
		t.Skip("no RES line in /proc/interrupts")
	}
	s := runFor(t, Config{Mode: ModeFutex, Duration: short})
	after, _ := readIPIs()
	if s.ReschedIPIs == nil || s.CallIPIs == nil || s.WakeupIPIsPerRoundTrip == nil {
		t.Fatalf("no IPI figures: %+v", s)
	}
	if *s.ReschedIPIs > after.res-before.res || *s.CallIPIs > after.cal-before.cal {
		t.Errorf("run reports %d RES, %d CAL; the machine had %d, %d over a longer span",
			*s.ReschedIPIs, *s.CallIPIs, after.res-before.res, after.cal-before.cal)
	}
	if got, want := *s.WakeupIPIsPerRoundTrip, float64(*s.ReschedIPIs+*s.CallIPIs)/float64(s.RoundTrips); got != want {
		t.Errorf("wake-up IPIs per round trip %v, want %v", got, want)
	}
	if s.MigrationsPerRoundTrip == nil && s.Migrations != nil {
		t.Errorf("migrations %d but none per round trip", *s.Migrations)
	}
}

// TestHardwareCounters: with a PMU the counters are there and plausible;
// without one the summary says why, in words.
func TestHardwareCounters(t *testing.T) {
	_, probe := openHW(0)
	s := runFor(t, Config{Mode: ModePipe, CPUs: []int{firstCPU(t)}, Duration: short})
	if probe != nil {
		t.Logf("no PMU: %v", probe)
		if s.HW != nil || s.HWNote == "" {
			t.Errorf("PMU unusable (%v) but summary has counters %+v, note %q", probe, s.HW, s.HWNote)
		}
		return
	}
	if s.HW == nil {
		t.Fatalf("PMU usable but no counters: %s", s.HWNote)
	}
	// A round trip is two read(2)s, two write(2)s and two switches:
	// thousands of instructions at least, and cycles to run them.
	if s.HW.InstructionsPerRoundTrip < 1000 || s.HW.CyclesPerRoundTrip < 500 {
		t.Errorf("per round trip: %.0f instructions, %.0f cycles", s.HW.InstructionsPerRoundTrip, s.HW.CyclesPerRoundTrip)
	}
}

// TestPerfCounterReads checks the perf_event_open plumbing the hardware
// counters use, with the kernel's software context-switch event, which
// every kernel with perf events has: its count on a thread that sleeps
// must match the switches /proc counts for it.
func TestPerfCounterReads(t *testing.T) {
	r, err := Start(Config{Mode: ModeFutex, CPUs: []int{firstCPU(t)}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	th := r.Progress().Threads[0]
	c, _, err := openPerfCounter(th.TID, unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		t.Skipf("perf events unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	p0, err := c.read()
	if err != nil {
		t.Fatal(err)
	}
	k0, _ := ReadCounters("/proc", th.PID, th.TID)
	// Beside CPU hogs the pinned pair made 72 switches in a fixed 100 ms:
	// read both counters until the kernel has counted the 100 compared.
	var perf uint64
	var kernel Counters
	for deadline := time.Now().Add(20 * time.Second); ; {
		time.Sleep(20 * time.Millisecond)
		p1, _ := c.read()
		k1, _ := ReadCounters("/proc", th.PID, th.TID)
		perf, kernel = p1-p0, k1.sub(k0)
		if kernel.Voluntary+kernel.Involuntary >= 100 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("perf: %d switches, /proc: %d", perf, kernel.Voluntary+kernel.Involuntary)
	// The two reads are not simultaneous: allow the switches of a few ms.
	if k := float64(kernel.Voluntary + kernel.Involuntary); k < 100 || float64(perf) < 0.8*k || float64(perf) > 1.2*k {
		t.Errorf("perf counted %d switches, /proc %v", perf, k)
	}
}

// TestBadConfigs: what the command line must refuse, Start refuses too,
// with one line that says what is wrong.
func TestBadConfigs(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: ModeFutex, WorkingSet: 1 << 40}, "working set must be 0 to 1G"},
		{Config{Mode: ModeFutex, WorkingSet: -1}, "working set must be"},
		{Config{Mode: ModeGoroutine, WorkingSet: 4096}, "applies to futex, pipe and process"},
		{Config{Mode: ModePool}, "1 to 4096 threads, got 0"},
		{Config{Mode: ModePool, Threads: 100000}, "1 to 4096 threads, got 100000"},
		{Config{Mode: ModePoll, Threads: 1, Period: -time.Millisecond}, "period must be"},
		{Config{Mode: ModePoll, Threads: 1, Period: time.Hour}, "period must be"},
		{Config{Mode: ModePool, Threads: 1, Work: time.Nanosecond}, "work must be"},
		{Config{Mode: ModePool, Threads: 1, CPUQuota: -0.5}, "CPU quota must be"},
		{Config{Mode: ModePool, Threads: 2, CPUs: []int{0}}, "cannot be pinned"},
		{Config{Mode: ModeFutex, Threads: 2}, "threads apply to pool and poll"},
		{Config{Mode: ModeFutex, Pairs: 100000}, "pairs must be 1 to 1024"},
	} {
		r, err := Start(c.cfg)
		if err == nil {
			r.Stop()
			t.Errorf("Start(%+v) succeeded", c.cfg)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Start(%+v): %q, want one line with %q", c.cfg, err, c.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"4096", 4096}, {"64K", 64 << 10}, {"64k", 64 << 10}, {"1M", 1 << 20}, {"8MiB", 8 << 20}, {"2G", 2 << 30}, {"1T", 1 << 40}} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
		if err == nil && got > 0 {
			if back, _ := ParseSize(FormatSize(got)); back != got {
				t.Errorf("FormatSize(%d) = %q does not read back", got, FormatSize(got))
			}
		}
	}
	for _, in := range []string{"", "-1", "1.5M", "M", "abc", "99999999999999T", "1X"} {
		if _, err := ParseSize(in); !errors.Is(err, ErrSize) {
			t.Errorf("ParseSize(%q): %v, want ErrSize", in, err)
		}
	}
}

// TestCPUQuota runs a pool of four threads under a twentieth of a CPU:
// small enough that they exceed it even on a machine busy with other work,
// so the cgroup throttles them in most periods and holds them to about
// the quota; the cgroup is gone afterwards.
func TestCPUQuota(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a cgroup")
	}
	if _, _, err := cgroupRoot(); err != nil {
		t.Skip(err)
	}
	cfg := Config{Mode: ModePool, Threads: 4, Work: 100 * time.Microsecond, CPUQuota: 0.05, Duration: 600 * time.Millisecond}
	r, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := r.cg.dir
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("no cgroup during the run: %v", err)
	}
	<-r.Done()
	s := r.Stop()
	t.Logf("%.0f items/s, %.2f CPU-s in %.2f s, throttled %.2f of %d periods, %.2f s", s.ItemsPerSec, s.CPUS, s.DurationS, deref(s.ThrottledShare), s.CgroupPeriods, s.ThrottledS)
	if s.ThrottledShare == nil || *s.ThrottledShare < 0.5 || s.CgroupPeriods < 3 {
		t.Errorf("throttled share %.2f of %d periods under a 0.05 CPU quota for four busy threads", deref(s.ThrottledShare), s.CgroupPeriods)
	}
	// A twentieth of a CPU, plus slack for the quota enforced a tick late
	// and the threads' start before the first period.
	if cpus := s.CPUS / s.DurationS; cpus > 0.2 {
		t.Errorf("pool used %.2f CPUs under a 0.05 CPU quota", cpus)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cgroup %s left behind: %v", dir, err)
	}
	if diff := cmp.Diff(0.05, s.CPUQuota); diff != "" {
		t.Errorf("cpu quota (-want +got):\n%s", diff)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestThreadExperimentNames: a monitor finds a pool's and a poller's
// threads by name.
func TestThreadExperimentNames(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: ModePool, Threads: 2}, "pool-worker"},
		{Config{Mode: ModePoll, Threads: 2}, "poll-sleeper"},
	} {
		r, err := Start(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		threads := r.Progress().Threads
		for _, th := range threads {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(th.PID) + "/task/" + strconv.Itoa(th.TID) + "/comm")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(b)); got != c.want {
				t.Errorf("%s thread named %q, want %q", c.cfg.Mode, got, c.want)
			}
		}
		if len(threads) != 2 {
			t.Errorf("%s with 2 threads: %v", c.cfg.Mode, threads)
		}
		r.Stop()
	}
}
