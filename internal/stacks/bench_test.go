package stacks

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/bpfutil"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/selfprio"
	"github.com/ctxtop/ctxtop/internal/symbolize"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkOverheadPinnedFutex is the stack tracer's cost where it is
// highest: a futex ping-pong pinned to one CPU (some 500,000 switches a
// second), measured as internal/waketrace's BenchmarkTracerOverheadPinnedFutex
// does: one ping-pong throughout, the tracer on and off under it in turn,
// each on window's ns per round trip against the mean of the off windows
// either side, the median of those paired ratios.
//
//   - targeted-on/off (target ≤ 1.05): the collector as the views run it,
//     both ping-pong threads its targets, sampled at the rates the last
//     snapshot gave; the window is the refresh after the read that set
//     the targets, up to the next read.
//   - untargeted-on/off: the programs attached with no target, so every
//     switch and waking pays only the filter lookup.
//   - unsampled-on/off: both threads targeted, every event's stacks
//     taken: what tracing without sampling would cost.
//   - floor-on/off: the same two tracepoints with programs that return at
//     once: the kernel's dispatch of two hooks, which no program can go
//     below; and filter/floor, the programs attached with no target
//     against that floor attached in turn: what the filter adds to it.
//
// A window's figure is its time over the round trips the workload itself
// counted in it, so a pause of the ping-pong inside a window counts
// against it. A window with no round trip at all is a stall: an on window
// is skipped only when its off neighbours stalled too (the host starved
// the ping-pong); when they did not, the stall is the tracer's and counts
// as an infinite ratio. An off window that stalled leaves its on window
// compared with the other neighbour.
//
// And the kernel's accounting of a program run (bpf_stats), without
// targets, with both targeted unsampled (also with their process
// registered as Go), and sampled.
func BenchmarkOverheadPinnedFutex(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	cpu := runtime.NumCPU() - 1
	run, err := load.Start(load.Config{Mode: load.ModeFutex, CPUs: []int{cpu}, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Stop()
	// The benchmark's own threads (the collector's reads and symbolizing,
	// the garbage collector) keep off the ping-pong's CPU, so that they
	// do not count as the tracer's cost. On one CPU there is no other.
	if cpu > 0 {
		var others, all unix.CPUSet
		for c := range runtime.NumCPU() {
			all.Set(c)
			if c != cpu {
				others.Set(c)
			}
		}
		pin := func(set *unix.CPUSet) error {
			return selfprio.EachThread(100, func(tid int) error { return unix.SchedSetaffinity(tid, set) })
		}
		if err := pin(&others); err != nil {
			b.Fatal(err)
		}
		defer pin(&all)
	}
	time.Sleep(300 * time.Millisecond)
	var threads []model.ThreadRates
	for _, t := range run.Progress().Threads {
		threads = append(threads, model.ThreadRates{PID: t.PID, TID: t.TID, Hot: true, VoluntaryPerSec: 1})
	}
	if len(threads) != 2 {
		b.Fatalf("ping-pong threads: %+v", run.Progress().Threads)
	}
	const settle = 10 * time.Millisecond
	// nsPerRT is the ns per round trip over window, or +Inf for a stall.
	nsPerRT := func(window time.Duration) float64 {
		time.Sleep(settle)
		t0, n0 := time.Now(), run.Progress().RoundTrips
		time.Sleep(window)
		t1, n1 := time.Now(), run.Progress().RoundTrips
		if n1 <= n0 {
			return math.Inf(1)
		}
		return float64(t1.Sub(t0).Nanoseconds()) / float64(n1-n0)
	}
	// ratio is an on window's against its off neighbours; false when it
	// tells nothing (both neighbours stalled).
	ratio := func(on, before, after float64) (float64, bool) {
		var offs []float64
		for _, x := range []float64{before, after} {
			if !math.IsInf(x, 1) {
				offs = append(offs, x)
			}
		}
		if len(offs) == 0 {
			return 0, false
		}
		var sum float64
		for _, x := range offs {
			sum += x
		}
		return on * float64(len(offs)) / sum, true
	}
	// paired alternates on() and measure() (which measures an on window)
	// with off(), n times.
	paired := func(n int, window time.Duration, on func(), measure func() float64, off func()) (ratios, offs []float64) {
		before := nsPerRT(window)
		stalls := 0
		for range n {
			on()
			ns := measure()
			off()
			after := nsPerRT(window)
			if r, ok := ratio(ns, before, after); ok {
				ratios = append(ratios, r)
			}
			if !math.IsInf(before, 1) {
				offs = append(offs, before)
			}
			if math.IsInf(ns, 1) || math.IsInf(after, 1) {
				stalls++
				b.Logf("stall: on window %.0f ns/rt, off windows %.0f and %.0f", ns, before, after)
			}
			before = after
		}
		if len(ratios) == 0 || len(offs) == 0 {
			b.Fatalf("every window stalled")
		}
		slices.Sort(ratios)
		slices.Sort(offs)
		return ratios, offs
	}
	q := func(r []float64, f float64) float64 { return r[int(f*float64(len(r)-1))] }
	report := func(name, what string, r []float64) {
		b.ReportMetric(q(r, .5), name)
		b.Logf("%s: median paired ratio %.3f (quartiles %.3f–%.3f) over %d windows", what, q(r, .5), q(r, .25), q(r, .75), len(r))
	}
	const refresh = 500 * time.Millisecond
	b.ReportAllocs()
	for range b.N {
		c := NewCollector(Options{})
		w := model.NewStackWindow(model.StackOptions{})
		var samples uint64
		var opens []time.Duration
		// The snapshot the view would hand over: each thread switches
		// once a round trip, at the rate of the window just measured, as
		// the pipeline hands over the interval's. One rate taken once
		// would set the sampling for the whole run from one window: on a
		// busy host that window, at half the usual rate, had every target
		// sampled twice as densely as the collector would.
		perSec := 1e9 / nsPerRT(refresh)
		setRate := func(ns float64) {
			if math.IsInf(ns, 1) {
				return
			}
			perSec = 1e9 / ns
			for i := range threads {
				threads[i].VoluntaryPerSec = perSec
			}
		}
		setRate(1e9 / perSec)
		snapOf := func() *model.Snapshot {
			// The host switches twice a round trip, as its
			// /proc/stat would say: the collector attaches for a
			// window of each refresh (see duty).
			return &model.Snapshot{Interval: refresh, System: model.SystemRates{ContextSwitchesPerSec: 2 * perSec},
				Threads: slices.Clone(threads)}
		}
		r, offs := paired(40, refresh, func() {
			t0 := time.Now()
			c.SetEnabled(true)
			opens = append(opens, time.Since(t0))
			// The first read has nothing yet; it sets the targets.
			ReadThrough(c, w, snapOf())
		}, func() float64 {
			ns := nsPerRT(refresh)
			setRate(ns)
			return ns
		}, func() {
			snap := snapOf()
			ReadThrough(c, w, snap)
			c.SetEnabled(false)
			if snap.Stacks == nil || snap.Stacks.Unavailable != "" {
				b.Fatalf("collector: %+v", snap.Stacks)
			}
			for _, t := range snap.Threads {
				for _, s := range t.BlockedAt {
					samples += s.Count
				}
			}
		})
		if samples == 0 {
			b.Fatal("no blocking switch of the ping-pong was sampled")
		}
		slices.Sort(opens)
		b.ReportMetric(q(offs, .5), "ns/rt-off")
		b.Logf("pinned futex, %.0f ns a round trip off, %.0f switches a second a thread, one in %d sampled; "+
			"%d blocking switches sampled in the last windows; collector enable (load, attach) median %v, max %v",
			q(offs, .5), perSec, sampleEvery(perSec, 2, sampleBudget), samples, q2(opens, .5), opens[len(opens)-1])
		report("targeted-on/off", "both threads targeted and sampled, collector read every "+refresh.String(), r)

		tr, err := Open()
		if err != nil {
			b.Fatal(err)
		}
		var raw Raw
		attached := func(on bool) func() {
			return func() {
				if err := tr.SetAttached(on); err != nil {
					b.Fatal(err)
				}
				if !on {
					tr.Read(&raw)
				}
			}
		}
		measure := func() float64 { return nsPerRT(refresh) }
		r, _ = paired(30, refresh, attached(true), measure, attached(false))
		report("untargeted-on/off", "no target: the filter lookup alone", r)
		fl := openFloor(b)
		floorAttached := func(on bool) func() { return func() { fl.setAttached(b, on) } }
		r, _ = paired(30, refresh, floorAttached(true), measure, floorAttached(false))
		report("floor-on/off", "floor: two programs that return at once on the same tracepoints", r)
		// The off windows have the floor attached, the on windows the
		// filter instead; the switch-over leaves neither attached for a
		// moment only, outside the windows.
		fl.setAttached(b, true)
		r, _ = paired(30, refresh, func() {
			fl.setAttached(b, false)
			attached(true)()
		}, measure, func() {
			attached(false)()
			fl.setAttached(b, true)
		})
		fl.setAttached(b, false)
		report("filter/floor", "the filter against the floor", r)
		unsampled := []Target{{TID: threads[0].TID, Every: 1}, {TID: threads[1].TID, Every: 1}}
		if err := tr.SetTargets(unsampled); err != nil {
			b.Fatal(err)
		}
		r, _ = paired(10, refresh, attached(true), measure, attached(false))
		report("unsampled-on/off", "both targeted, every event's stacks taken", r)

		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			b.Fatalf("bpf_stats: %v", err)
		}
		if err := tr.SetAttached(true); err != nil {
			b.Fatal(err)
		}
		progsOf := func(tr *Tracer) [2]*ebpf.Program {
			return [2]*ebpf.Program{tr.objs.CtxtopStacksSwitch, tr.objs.CtxtopStacksWaking}
		}
		perRunOf := func(progs [2]*ebpf.Program, label string) {
			var st0 [2]*ebpf.ProgramStats
			for i, p := range progs {
				if st0[i], err = p.Stats(); err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(time.Second)
			for i, name := range []string{"switch", "waking"} {
				st1, err := progs[i].Stats()
				if err != nil {
					b.Fatal(err)
				}
				runs := st1.RunCount - st0[i].RunCount
				ns := float64((st1.Runtime - st0[i].Runtime).Nanoseconds()) / float64(max(runs, 1))
				b.ReportMetric(ns, "ns/"+name+"-run-"+label)
				b.Logf("bpf_stats, %s: %.0f ns a sched_%s run over %d runs", label, ns, name, runs)
			}
		}
		perRun := func(label string) { perRunOf(progsOf(tr), label) }
		tr.SetTargets(nil)
		perRun("untargeted")
		if err := tr.SetAttached(false); err != nil {
			b.Fatal(err)
		}
		fl.setAttached(b, true)
		perRunOf(fl.progs, "floor")
		fl.setAttached(b, false)
		fl.close()
		if err := tr.SetAttached(true); err != nil {
			b.Fatal(err)
		}
		tr.SetTargets(unsampled)
		perRun("unsampled")
		// The ping-pong's process is this Go test binary: registered as
		// Go, every event of a target also reads its g and g.m.g0 to
		// tell whether the thread is in the scheduler (it is not: it
		// blocks in futex on its goroutine's own stack), the check every
		// Go target's sampled switch pays.
		sym, err := symbolize.New(symbolize.Options{Proc: "/proc"})
		if err != nil {
			b.Fatal(err)
		}
		rt, err := sym.GoProcess(threads[0].PID)
		if err != nil {
			b.Fatalf("the ping-pong's runtime: %v", err)
		}
		if err := tr.SetGoProcess(threads[0].PID, &rt); err != nil {
			b.Fatal(err)
		}
		perRun("unsampled-go")
		if err := tr.SetGoProcess(threads[0].PID, nil); err != nil {
			b.Fatal(err)
		}
		every := sampleEvery(perSec, 2, sampleBudget)
		tr.SetTargets([]Target{{TID: threads[0].TID, Every: every}, {TID: threads[1].TID, Every: every}})
		perRun("sampled")
		tr.Close()

		// With register and stack captures (the default): every event's
		// capture, then sampled. The ring is drained every 2 ms meanwhile
		// (from the other CPU), so that captures do not find it full,
		// which would cost less.
		ctr, err := OpenCapture(DefaultStackBytes)
		if err != nil {
			b.Fatal(err)
		}
		if err := ctr.SetAttached(true); err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		drained := make(chan Raw)
		go func() {
			var raw Raw
			var n int
			for {
				select {
				case <-stop:
					ctr.Read(&raw)
					raw.Blocked = make([]BlockCount, n)
					drained <- raw
					return
				case <-time.After(2 * time.Millisecond):
				}
				k, _ := ctr.ReadCaptures(func(*Capture) {})
				n += k
			}
		}()
		ctr.SetTargets(unsampled)
		perRunOf(progsOf(ctr), "unsampled-capture")
		ctr.SetTargets([]Target{{TID: threads[0].TID, Every: every}, {TID: threads[1].TID, Every: every}})
		perRunOf(progsOf(ctr), "sampled-capture")
		close(stop)
		last := <-drained
		b.ReportMetric(float64(len(last.Blocked)), "captures-read")
		b.ReportMetric(float64(last.CaptureLost), "captures-lost")
		stats.Close()
		ctr.Close()
	}
}

// floor is a program that returns at once on each of the tracer's two
// tracepoints: what attaching anything there costs a switch and a waking.
type floor struct {
	progs [2]*ebpf.Program
	links [2]*bpfutil.RawLink
}

func openFloor(b *testing.B) *floor {
	b.Helper()
	var f floor
	for i, tp := range []string{"sched_switch", "sched_waking"} {
		p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: "ctxtop_floor", Type: ebpf.Tracing, AttachType: ebpf.AttachTraceRawTp, AttachTo: tp,
			Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}, License: "GPL",
		})
		if err != nil {
			b.Fatalf("floor program on %s: %v", tp, err)
		}
		f.progs[i] = p
	}
	return &f
}

func (f *floor) setAttached(b *testing.B, on bool) {
	b.Helper()
	for i, p := range f.progs {
		switch {
		case on && f.links[i] == nil:
			l, err := bpfutil.AttachRaw(p)
			if err != nil {
				b.Fatalf("floor: %v", err)
			}
			f.links[i] = l
		case !on && f.links[i] != nil:
			f.links[i].Close()
			f.links[i] = nil
		}
	}
}

func (f *floor) close() {
	for _, p := range f.progs {
		p.Close()
	}
}

func q2(d []time.Duration, f float64) time.Duration { return d[int(f*float64(len(d)-1))] }

// BenchmarkCollectorRead is one refresh's drain, symbolization and summary
// with the blocking stacks of a pinned ping-pong's two threads.
func BenchmarkCollectorRead(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	run, err := load.Start(load.Config{Mode: load.ModeFutex, CPUs: []int{runtime.NumCPU() - 1}, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Stop()
	time.Sleep(300 * time.Millisecond)
	var threads []model.ThreadRates
	for _, t := range run.Progress().Threads {
		threads = append(threads, model.ThreadRates{PID: t.PID, TID: t.TID, Hot: true, VoluntaryPerSec: 1})
	}
	c := NewCollector(Options{})
	c.SetEnabled(true)
	defer c.Close()
	w := model.NewStackWindow(model.StackOptions{})
	snap := model.Snapshot{Threads: slices.Clone(threads)}
	ReadThrough(c, w, &snap)
	b.ReportAllocs()
	for b.Loop() {
		time.Sleep(10 * time.Millisecond)
		snap := model.Snapshot{Threads: slices.Clone(threads)}
		ReadThrough(c, w, &snap)
	}
}

// BenchmarkFloorPinnedPipe is the floor and the filter alone (see
// BenchmarkOverheadPinnedFutex) under the pipe ping-pong that
// scripts/stacks-compare.sh runs the whole ctxtop process on (MODE=pipe):
// there about half the switches are preemptions, which the switch
// program leaves at its first test, and a round trip has some 1.07
// wakings, so the whole process's figure can be split the same way.
func BenchmarkFloorPinnedPipe(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	run, err := load.Start(load.Config{Mode: load.ModePipe, CPUs: []int{runtime.NumCPU() - 1}, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Stop()
	time.Sleep(300 * time.Millisecond)
	trips := func() uint64 { return run.Progress().RoundTrips }
	fl := openFloor(b)
	defer fl.close()
	tr, err := Open()
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	const window = 400 * time.Millisecond
	for range b.N {
		for _, c := range []struct {
			name    string
			on, off func()
		}{
			{"floor-on/off", func() { fl.setAttached(b, true) }, func() { fl.setAttached(b, false) }},
			{"untargeted-on/off", func() {
				if err := tr.SetAttached(true); err != nil {
					b.Fatal(err)
				}
			}, func() {
				if err := tr.SetAttached(false); err != nil {
					b.Fatal(err)
				}
			}},
		} {
			r, offNs := testutil.PairedOverhead(b, trips, 30, 10*time.Millisecond, window, c.on, c.off)
			q := func(f float64) float64 { return r[int(f*float64(len(r)-1))] }
			b.ReportMetric(q(.5), c.name)
			b.Logf("pinned pipe, %s: median paired ratio %.3f (quartiles %.3f–%.3f), %.0f ns a round trip off", c.name, q(.5), q(.25), q(.75), offNs)
		}
	}
}
