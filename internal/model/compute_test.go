package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func task(pid, tid int, start, vol, invol, runNs, waitNs uint64) TaskCounters {
	return TaskCounters{PID: pid, TID: tid, Comm: "t", ProcessComm: "p", StartTime: start,
		VoluntarySwitches: vol, InvoluntarySwitches: invol, RunNs: runNs, WaitNs: waitNs, CPUsAllowed: "0-1"}
}

func sample(at time.Duration, tasks ...TaskCounters) *Sample {
	return &Sample{Time: t0.Add(at), System: SystemCounters{CPUs: 2}, Tasks: tasks}
}

type rate struct {
	PID, TID   int
	Vol, Invol float64
	CPU, Wait  float64
}

func rates(s Snapshot) []rate {
	var out []rate
	for _, t := range s.Threads {
		out = append(out, rate{t.PID, t.TID, t.VoluntaryPerSec, t.InvoluntaryPerSec, t.CPUPercent, t.WaitPercent})
	}
	return out
}

func TestComputeThreadRates(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur *Sample
		want      []rate
	}{
		{
			name: "rates over two seconds",
			prev: sample(0, task(1, 1, 5, 100, 10, 0, 0)),
			cur:  sample(2*time.Second, task(1, 1, 5, 300, 30, 1e9, 2e8)),
			want: []rate{{1, 1, 100, 10, 50, 10}},
		},
		{
			name: "idle thread has no row",
			prev: sample(0, task(1, 1, 5, 100, 10, 7, 7)),
			cur:  sample(time.Second, task(1, 1, 5, 100, 10, 7, 7)),
		},
		{
			name: "TID reused: new start time, no rate",
			prev: sample(0, task(1, 2, 5, 900, 90, 9e9, 0)),
			cur:  sample(time.Second, task(1, 2, 6, 3, 1, 1e6, 0)),
		},
		{
			name: "counter went backwards, no rate",
			prev: sample(0, task(1, 2, 5, 900, 90, 0, 0)),
			cur:  sample(time.Second, task(1, 2, 5, 800, 95, 0, 0)),
		},
		{
			name: "run time went backwards, no rate",
			prev: sample(0, task(1, 2, 5, 900, 90, 5e9, 0)),
			cur:  sample(time.Second, task(1, 2, 5, 901, 90, 4e9, 0)),
		},
		{
			name: "new thread has no rate yet; exited thread vanishes",
			prev: sample(0, task(1, 1, 5, 0, 0, 0, 0), task(1, 3, 5, 50, 0, 0, 0)),
			cur:  sample(time.Second, task(1, 1, 5, 10, 0, 0, 0), task(1, 2, 7, 40, 0, 0, 0)),
			want: []rate{{1, 1, 10, 0, 0, 0}},
		},
		{
			name: "sorted by total, then CPU, then PID and TID",
			prev: sample(0, task(1, 1, 5, 0, 0, 0, 0), task(1, 2, 5, 0, 0, 0, 0), task(2, 9, 5, 0, 0, 0, 0), task(3, 3, 5, 0, 0, 0, 0)),
			cur:  sample(time.Second, task(1, 1, 5, 5, 0, 0, 0), task(1, 2, 5, 50, 0, 0, 0), task(2, 9, 5, 5, 0, 1e8, 0), task(3, 3, 5, 5, 0, 0, 0)),
			want: []rate{{1, 2, 50, 0, 0, 0}, {2, 9, 5, 0, 10, 0}, {1, 1, 5, 0, 0, 0}, {3, 3, 5, 0, 0, 0}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := rates(Compute(tt.prev, tt.cur, Options{}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestComputeProcessIsSumOfThreads(t *testing.T) {
	prev := sample(0, task(10, 10, 1, 0, 0, 0, 0), task(10, 11, 1, 0, 0, 0, 0), task(10, 12, 1, 0, 0, 0, 0), task(20, 20, 1, 0, 0, 0, 0))
	cur := sample(time.Second, task(10, 10, 1, 1, 0, 1e7, 0), task(10, 11, 1, 400, 100, 2e8, 5e7), task(10, 12, 1, 0, 0, 0, 0), task(20, 20, 1, 3, 0, 0, 0))
	s := Compute(prev, cur, Options{})
	want := []ProcessRates{
		{PID: 10, Comm: "p", Threads: 3, VoluntaryPerSec: 401, InvoluntaryPerSec: 100, CPUPercent: 21, WaitPercent: 5},
		{PID: 20, Comm: "p", Threads: 1, VoluntaryPerSec: 3},
	}
	if diff := cmp.Diff(want, s.Processes, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestComputeHotReasons(t *testing.T) {
	prev := sample(0, task(1, 1, 1, 0, 0, 0, 0), task(1, 2, 1, 0, 0, 0, 0), task(1, 3, 1, 0, 0, 0, 0))
	cur := sample(time.Second,
		task(1, 1, 1, 5000, 100, 0, 1e7),   // blocking, 1% wait
		task(1, 2, 1, 100, 3000, 0, 3.5e8), // preempted, 35% wait
		task(1, 3, 1, 999, 0, 0, 0))        // under the threshold
	s := Compute(prev, cur, Options{HotThreshold: 1000})
	got := map[int]string{}
	for _, th := range s.Threads {
		if th.Hot {
			got[th.TID] = th.Why.String()
		} else if th.Why.Hot() {
			t.Errorf("cold thread %d has reason %q", th.TID, th.Why)
		}
	}
	want := map[int]string{1: "blocking, wait 1%", 2: "preempted, wait 35%"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if !s.Processes[0].Hot || s.Processes[0].Why.String() != "blocking, wait 36%" {
		t.Errorf("process = hot %v %q", s.Processes[0].Hot, s.Processes[0].Why)
	}
	// The threshold is configurable.
	if s := Compute(prev, cur, Options{HotThreshold: 1e6}); s.Threads[0].Hot {
		t.Error("hot at 5,100/s with --hot 1000000")
	}
}

func TestComputePinned(t *testing.T) {
	prev := sample(0, task(1, 1, 1, 0, 0, 0, 0), task(1, 2, 1, 0, 0, 0, 0))
	cur := sample(time.Second, task(1, 1, 1, 5, 0, 0, 0), task(1, 2, 1, 9, 0, 0, 0))
	cur.Tasks[0].CPUsAllowed = "1"
	s := Compute(prev, cur, Options{})
	pinned := map[int]bool{}
	for _, th := range s.Threads {
		pinned[th.TID] = th.Pinned
	}
	if diff := cmp.Diff(map[int]bool{1: true, 2: false}, pinned); diff != "" {
		t.Errorf("pinned (-want +got)\n%s", diff)
	}
}

func TestComputeSystemAndSelf(t *testing.T) {
	prev := sample(0)
	prev.System = SystemCounters{ContextSwitches: 1000, Interrupts: 500, ReschedIPIs: 10, CPUs: 2,
		ReschedPerCPU: []uint64{4, 6}, InterruptsPerCPU: []uint64{200, 300}}
	prev.Self = SelfCounters{CPUTime: time.Millisecond, VoluntarySwitches: 10, InvoluntarySwitches: 1}
	cur := sample(2 * time.Second)
	cur.System = SystemCounters{ContextSwitches: 3000, Interrupts: 900, ReschedIPIs: 50, CPUs: 3, ProcsRunning: 4, ProcsBlocked: 1,
		ReschedPerCPU: []uint64{24, 26, 0}, InterruptsPerCPU: []uint64{400, 500, 0}, HasPSI: true, PSICPUSomeAvg10: 1.5, LoadAvg: [3]float64{1, 2, 3}}
	cur.Self = SelfCounters{CPUTime: 21 * time.Millisecond, VoluntarySwitches: 16, InvoluntarySwitches: 1}
	s := Compute(prev, cur, Options{})
	want := SystemRates{ContextSwitchesPerSec: 1000, InterruptsPerSec: 200, ReschedIPIsPerSec: 20, ProcsRunning: 4, ProcsBlocked: 1, CPUs: 3,
		// A CPU that came online has no rate yet.
		PerCPU: []CPURates{{100, 10}, {100, 10}},
		HasPSI: true, PSICPUSomeAvg10: 1.5, LoadAvg: [3]float64{1, 2, 3}}
	if diff := cmp.Diff(want, s.System); diff != "" {
		t.Errorf("system (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(SelfRates{CPUPercent: 1, SwitchesPerSec: 3}, s.Self); diff != "" {
		t.Errorf("self (-want +got)\n%s", diff)
	}
	// A counter reset (a different host's tree, a replay) gives zero, not a wrapped number.
	cur.System.ContextSwitches = 10
	if r := Compute(prev, cur, Options{}).System.ContextSwitchesPerSec; r != 0 {
		t.Errorf("cs/s after a reset = %v", r)
	}
}

func TestComputePerCPUWhenCPUsChange(t *testing.T) {
	prev, cur := sample(0), sample(time.Second)
	prev.System = SystemCounters{CPUs: 3, ReschedPerCPU: []uint64{1, 2, 3}, InterruptsPerCPU: []uint64{10, 20, 30}}
	cur.System = SystemCounters{CPUs: 2, ReschedPerCPU: []uint64{5, 6}, InterruptsPerCPU: []uint64{11, 22}}
	want := []CPURates{{1, 4}, {2, 4}}
	if diff := cmp.Diff(want, Compute(prev, cur, Options{}).System.PerCPU); diff != "" {
		t.Errorf("a CPU went offline (-want +got)\n%s", diff)
	}
	// The two per-CPU rows disagree on the CPU count (a torn read): only
	// the CPUs both rows have get a rate.
	cur.System.InterruptsPerCPU = cur.System.InterruptsPerCPU[:1]
	if diff := cmp.Diff(want[:1], Compute(prev, cur, Options{}).System.PerCPU); diff != "" {
		t.Errorf("rows of different length (-want +got)\n%s", diff)
	}
}

func TestComputeZeroOrNegativeInterval(t *testing.T) {
	a := sample(time.Second, task(1, 1, 1, 0, 0, 0, 0))
	b := sample(time.Second, task(1, 1, 1, 50, 0, 0, 0))
	for _, s := range []Snapshot{Compute(a, b, Options{}), Compute(b, sample(0, task(1, 1, 1, 99, 0, 0, 0)), Options{})} {
		if len(s.Threads) != 0 || s.System.ContextSwitchesPerSec != 0 {
			t.Errorf("rates over a non-positive interval: %+v", s)
		}
	}
}

func TestCountCPUs(t *testing.T) {
	for in, want := range map[string]int{"0": 1, "0-1": 2, "0-3,8": 5, "0-3,8,10-11": 7, "": 0, "x": 0, "3-1": 0, "0,": 1, "1-": 0} {
		if got := CountCPUs(in); got != want {
			t.Errorf("CountCPUs(%q) = %d, want %d", in, got, want)
		}
	}
}

// FuzzCompute builds two samples from arbitrary bytes and checks the
// invariants every consumer relies on.
func FuzzCompute(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, int64(1e9))
	f.Add([]byte{}, int64(0))
	f.Fuzz(func(t *testing.T, b []byte, intervalNs int64) {
		mk := func(b []byte, at time.Time) *Sample {
			s := &Sample{Time: at, System: SystemCounters{CPUs: 2}}
			for i := 0; i+6 <= len(b); i += 6 {
				pid, tid := int(b[i]%4), int(b[i+1]%4)
				n := len(s.Tasks)
				if n > 0 && (s.Tasks[n-1].PID > pid || s.Tasks[n-1].PID == pid && s.Tasks[n-1].TID >= tid) {
					continue // keep the sampler's sort order
				}
				s.Tasks = append(s.Tasks, TaskCounters{PID: pid, TID: tid, StartTime: uint64(b[i+2] % 2),
					VoluntarySwitches: uint64(b[i+3]) * 1000, InvoluntarySwitches: uint64(b[i+4]), RunNs: uint64(b[i+5]) * 1e7, WaitNs: uint64(b[i+5]) * 1e6,
					CPUsAllowed: "0"})
			}
			return s
		}
		half := len(b) / 2
		prev, cur := mk(b[:half], t0), mk(b[half:], t0.Add(time.Duration(intervalNs)))
		s := Compute(prev, cur, Options{})
		sum := map[int][3]float64{}
		threads := map[int]int{}
		for _, c := range cur.Tasks {
			threads[c.PID]++
		}
		if !slices.IsSortedFunc(s.Threads, func(a, b ThreadRates) int { return compareThreads(&a, &b) }) {
			t.Fatal("threads not in rate order")
		}
		if !slices.IsSortedFunc(s.Processes, func(a, b ProcessRates) int {
			return byRate(a.TotalPerSec(), b.TotalPerSec(), a.CPUPercent, b.CPUPercent, a.PID, b.PID, 0, 0)
		}) {
			t.Fatal("processes not in rate order")
		}
		for i, th := range s.Threads {
			for _, v := range []float64{th.VoluntaryPerSec, th.InvoluntaryPerSec, th.CPUPercent, th.WaitPercent} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("bad rate in %+v", th)
				}
			}
			if i > 0 && s.Threads[i-1].TotalPerSec() < th.TotalPerSec() {
				t.Fatalf("threads not sorted by total")
			}
			p := sum[th.PID]
			sum[th.PID] = [3]float64{p[0] + th.VoluntaryPerSec, p[1] + th.InvoluntaryPerSec, p[2] + th.CPUPercent}
		}
		if len(s.Processes) != len(sum) {
			t.Fatalf("%d processes, threads of %d processes moved", len(s.Processes), len(sum))
		}
		for _, p := range s.Processes {
			want := sum[p.PID]
			got := [3]float64{p.VoluntaryPerSec, p.InvoluntaryPerSec, p.CPUPercent}
			for k := range got {
				if math.Abs(got[k]-want[k]) > 1e-6*(1+want[k]) {
					t.Fatalf("process %d = %v, threads sum to %v", p.PID, got, want)
				}
			}
			if p.Threads != threads[p.PID] {
				t.Fatalf("process %d has %d threads, cur has %d", p.PID, p.Threads, threads[p.PID])
			}
		}
	})
}

// tenThousand builds two samples of 10,000 threads in 100 processes, of
// which every busy-th thread switched (all of them when busy is 1) and every
// hotEvery-th one switched often enough to be hot.
func tenThousand(busy, hotEvery int) (prev, cur *Sample) {
	prev, cur = &Sample{Time: t0, System: SystemCounters{CPUs: 2}}, &Sample{Time: t0.Add(time.Second), System: SystemCounters{CPUs: 2}}
	for i := range 10000 {
		prev.Tasks = append(prev.Tasks, task(1+i/100, 1+i, 1, 10, 1, 0, 0))
		c := task(1+i/100, 1+i, 1, 10, 1, 0, 0)
		if i%busy == 0 {
			c.VoluntarySwitches += uint64(50 + i%37)
			c.RunNs += uint64(i%13) * 1e6
		}
		if i%hotEvery == 0 {
			c.InvoluntarySwitches += 2000
			c.WaitNs += uint64(i%45) * 1e7 // a process sums to at most 88%
		}
		cur.Tasks = append(cur.Tasks, c)
	}
	return prev, cur
}

func TestComputeIntoMatchesComputeAndReuses(t *testing.T) {
	prev, cur := tenThousand(3, 50)
	want := Compute(prev, cur, Options{})
	var got Snapshot
	ComputeInto(&got, prev, cur, Options{})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ComputeInto differs from Compute (-want +got)\n%s", diff)
	}
	if len(got.Threads) == 0 || len(got.Processes) == 0 {
		t.Fatal("fixture has no busy rows")
	}
	first := &got.Threads[0]
	// The steady state of a batch loop: the same Snapshot every tick.
	allocs := testing.AllocsPerRun(20, func() { ComputeInto(&got, prev, cur, Options{}) })
	if allocs != 0 {
		t.Errorf("ComputeInto into a grown Snapshot allocated %v times per call, want 0", allocs)
	}
	if &got.Threads[0] != first {
		t.Error("ComputeInto did not reuse dst.Threads")
	}
	// A smaller tick after a larger one leaves no stale rows behind.
	ComputeInto(&got, sample(0, task(1, 1, 1, 0, 0, 0, 0)), sample(time.Second, task(1, 1, 1, 7, 0, 0, 0)), Options{})
	if diff := cmp.Diff([]rate{{1, 1, 7, 0, 0, 0}}, rates(got)); diff != "" {
		t.Errorf("after a smaller tick (-want +got)\n%s", diff)
	}
	if len(got.Processes) != 1 || got.System.PerCPU != nil {
		t.Errorf("stale rows: %d processes, per-CPU %v", len(got.Processes), got.System.PerCPU)
	}
	// So does a tick with no interval to compute rates over.
	ComputeInto(&got, cur, cur, Options{})
	if len(got.Threads) != 0 || len(got.Processes) != 0 || got.Tasks != len(cur.Tasks) {
		t.Errorf("zero interval into a used Snapshot: %d threads, %d processes, %d tasks", len(got.Threads), len(got.Processes), got.Tasks)
	}
}

func compareThreads(a, b *ThreadRates) int {
	return byRate(a.TotalPerSec(), b.TotalPerSec(), a.CPUPercent, b.CPUPercent, a.PID, b.PID, a.TID, b.TID)
}

func TestSortByRateMatchesPlainSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 63, 64, 300, 5000} {
		rows := make([]ThreadRates, n)
		procs := make([]ProcessRates, n)
		for i := range rows {
			// Few distinct rates, so ties on total and CPU are common.
			rows[i] = ThreadRates{PID: i / 7, TID: i, VoluntaryPerSec: float64(rng.IntN(20)), InvoluntaryPerSec: float64(rng.IntN(3)), CPUPercent: float64(rng.IntN(4))}
			procs[i] = ProcessRates{PID: i, VoluntaryPerSec: float64(rng.IntN(20)), InvoluntaryPerSec: float64(rng.IntN(3)), CPUPercent: float64(rng.IntN(4))}
		}
		want := slices.Clone(rows)
		slices.SortFunc(want, func(a, b ThreadRates) int { return compareThreads(&a, &b) })
		sortByRate(rows, func(t *ThreadRates) (float64, float64) { return t.TotalPerSec(), t.CPUPercent })
		if diff := cmp.Diff(want, rows); diff != "" {
			t.Errorf("%d rows (-want +got)\n%s", n, diff)
		}
		wantProcs := slices.Clone(procs)
		slices.SortFunc(wantProcs, func(a, b ProcessRates) int {
			return byRate(a.TotalPerSec(), b.TotalPerSec(), a.CPUPercent, b.CPUPercent, a.PID, b.PID, 0, 0)
		})
		sortByRate(procs, func(p *ProcessRates) (float64, float64) { return p.TotalPerSec(), p.CPUPercent })
		if diff := cmp.Diff(wantProcs, procs); diff != "" {
			t.Errorf("%d processes (-want +got)\n%s", n, diff)
		}
	}
}

// BenchmarkCompute10kThreads is a quiet host: 1% of 10,000 threads switched.
func BenchmarkCompute10kThreads(b *testing.B) {
	prev, cur := tenThousand(100, 1e9)
	b.ReportAllocs()
	for b.Loop() {
		Compute(prev, cur, Options{})
	}
}

// BenchmarkComputeInto10kThreads is the same host through a reused Snapshot.
func BenchmarkComputeInto10kThreads(b *testing.B) {
	prev, cur := tenThousand(100, 1e9)
	var s Snapshot
	b.ReportAllocs()
	for b.Loop() {
		ComputeInto(&s, prev, cur, Options{})
	}
}

// BenchmarkComputeInto10kBusyThreads is the worst case: every thread
// switched, so every one is a row to sort, and 2% are hot.
func BenchmarkComputeInto10kBusyThreads(b *testing.B) {
	prev, cur := tenThousand(1, 50)
	var s Snapshot
	b.ReportAllocs()
	for b.Loop() {
		ComputeInto(&s, prev, cur, Options{})
	}
}

// The header's cs/s counts switches no row holds (threads that exited in
// the interval, switches into the idle task); the rest is reported, so the
// rows and the header reconcile.
func TestComputeUnattributed(t *testing.T) {
	prev := sample(0, task(1, 1, 5, 100, 10, 0, 0), task(1, 2, 5, 0, 0, 0, 0))
	cur := sample(2*time.Second, task(1, 1, 5, 300, 30, 1e9, 0), task(1, 2, 5, 100, 0, 1e6, 0))
	prev.System.ContextSwitches, cur.System.ContextSwitches = 1000, 1000+2*1000
	s := Compute(prev, cur, Options{})
	// rows: 100+10 + 50 = 160/s of 1000/s
	if diff := cmp.Diff(840.0, s.UnattributedPerSec); diff != "" {
		t.Errorf("unattributed (-want +got)\n%s", diff)
	}
	// Rows past the counter (rounding, a race between the reads) give 0, not a negative.
	cur.System.ContextSwitches = 1000 + 2*100
	if got := Compute(prev, cur, Options{}).UnattributedPerSec; got != 0 {
		t.Errorf("rows above the system count: unattributed %v, want 0", got)
	}
	// Sampling only some processes (--pid): everything else is not "unexplained".
	cur.System.ContextSwitches = 1000 + 2*1000
	if got := Compute(prev, cur, Options{Partial: true}).UnattributedPerSec; got != 0 {
		t.Errorf("partial sample: unattributed %v, want 0", got)
	}
}

// Threads present in one sample and gone from the next are listed as
// exited, whatever their counters did, with Process set when their
// process has no thread left; a live thread, idle or busy, never is.
func TestComputeExited(t *testing.T) {
	prev := sample(0,
		task(1, 1, 5, 10, 0, 0, 0), // stays, idle
		task(1, 2, 5, 10, 0, 0, 0), // exits; its process stays
		task(1, 3, 5, 10, 0, 0, 0), // stays, busy
		task(2, 2, 5, 10, 0, 0, 0), // exits with its process
		task(3, 3, 5, 10, 0, 0, 0), // its TID is reused: exits
		task(7, 7, 5, 10, 0, 0, 0), // last of prev, exits with its process
		task(7, 8, 5, 10, 0, 0, 0)) // and its second thread
	cur := sample(time.Second,
		task(1, 1, 5, 10, 0, 0, 0),
		task(1, 3, 5, 99, 0, 0, 0),
		task(3, 3, 9, 1, 0, 0, 0),
		task(4, 4, 5, 1, 0, 0, 0)) // new
	want := []ExitedTask{{1, 2, false}, {2, 2, true}, {3, 3, false}, {7, 7, true}, {7, 8, true}}
	got := Compute(prev, cur, Options{})
	if diff := cmp.Diff(want, got.Exited); diff != "" {
		t.Errorf("exited (-want +got):\n%s", diff)
	}
	// Reused from an earlier Snapshot: no exit of that one is left over.
	dst, later := got, *cur
	later.Time = later.Time.Add(time.Second)
	ComputeInto(&dst, cur, &later, Options{})
	if len(dst.Exited) != 0 {
		t.Errorf("the same tasks again: exited %v, want none", dst.Exited)
	}
}
