package stacks

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/model"
)

// BenchmarkOverheadPinnedFutex is the stack tracer's cost where it is
// highest: a futex ping-pong pinned to one CPU (some 400,000 switches a
// second), measured as internal/wakeup's BenchmarkTracerOverheadPinnedFutex
// does: one ping-pong throughout, the tracer attached and detached under
// it in turn, each attached window's ns per round trip against the mean of
// the detached windows either side, the median of those paired ratios.
//
//   - targeted-on/off (target ≤ 1.05): both ping-pong threads are targets,
//     the collector read every refresh (0.5 s) as the views read it, which
//     traces the part of each interval its switch budget allows.
//   - untargeted-on/off: the programs attached throughout with no target,
//     so every switch and waking pays only the filter lookup.
//   - always-on/off: the programs attached throughout, both threads
//     targeted: what tracing every switch would cost.
//
// And the kernel's accounting of a program run (bpf_stats), with and
// without targets.
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
	time.Sleep(300 * time.Millisecond)
	var threads []model.ThreadRates
	for _, t := range run.Progress().Threads {
		threads = append(threads, model.ThreadRates{PID: t.PID, TID: t.TID, Hot: true, VoluntaryPerSec: 1})
	}
	if len(threads) != 2 {
		b.Fatalf("ping-pong threads: %+v", run.Progress().Threads)
	}
	const settle = 10 * time.Millisecond
	nsPerRT := func(window time.Duration) float64 {
		time.Sleep(settle)
		t0, n0 := time.Now(), run.Progress().RoundTrips
		time.Sleep(window)
		t1, n1 := time.Now(), run.Progress().RoundTrips
		if n1 <= n0 {
			b.Fatalf("the ping-pong made no round trip in %v", window)
		}
		return float64(t1.Sub(t0).Nanoseconds()) / float64(n1-n0)
	}
	paired := func(n int, window time.Duration, on, off func()) (ratios []float64, offNs float64) {
		before := nsPerRT(window)
		var offs []float64
		for range n {
			on()
			ns := nsPerRT(window)
			off()
			after := nsPerRT(window)
			ratios = append(ratios, 2*ns/(before+after))
			offs = append(offs, before)
			before = after
		}
		slices.Sort(ratios)
		slices.Sort(offs)
		return ratios, offs[len(offs)/2]
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
		var traced uint64
		// The snapshot the view would hand over: each thread switches
		// once a round trip.
		perSec := 1e9 / nsPerRT(refresh)
		for i := range threads {
			threads[i].VoluntaryPerSec = perSec
		}
		// One refresh with the view on, measured from the read that
		// starts its traced part (the first, whose rate is unknown, is
		// let pass), against the refreshes with it off either side.
		snapOf := func() *model.Snapshot {
			return &model.Snapshot{Interval: refresh, Threads: slices.Clone(threads)}
		}
		var r []float64
		var offs []float64
		before := nsPerRT(refresh)
		for range 30 {
			c.SetEnabled(true)
			c.Read(snapOf())
			time.Sleep(firstWindow)
			t0, n0 := time.Now(), run.Progress().RoundTrips
			c.Read(snapOf())
			time.Sleep(refresh)
			t1, n1 := time.Now(), run.Progress().RoundTrips
			snap := snapOf()
			c.Read(snap)
			c.SetEnabled(false)
			if snap.Stacks == nil || snap.Stacks.Unavailable != "" {
				b.Fatalf("collector: %+v", snap.Stacks)
			}
			if n1 <= n0 {
				// The host starved the ping-pong (load average 15-80 on a
				// shared 2-CPU box): no figure from this window.
				b.Logf("no round trip in a %v window; skipped", refresh)
				before = nsPerRT(refresh)
				continue
			}
			for _, t := range snap.Threads {
				for _, s := range t.BlockedAt {
					traced += s.Count
				}
			}
			ns := float64(t1.Sub(t0).Nanoseconds()) / float64(n1-n0)
			after := nsPerRT(refresh)
			r = append(r, 2*ns/(before+after))
			offs = append(offs, before)
			before = after
		}
		slices.Sort(r)
		slices.Sort(offs)
		off := offs[len(offs)/2]
		if traced == 0 {
			b.Fatal("no blocking switch of the ping-pong was traced")
		}
		b.ReportMetric(off, "ns/rt-off")
		b.Logf("pinned futex, %.0f ns a round trip detached; %d blocking switches traced in the last windows", off, traced)
		report("targeted-on/off", "both threads targeted, collector read every "+refresh.String(), r)

		tr, err := Open()
		if err != nil {
			b.Fatal(err)
		}
		r, _ = paired(30, refresh, func() {
			if tr.sw, err = attach(tr.objs.CtxtopStacksSwitch); err != nil {
				b.Fatal(err)
			}
			if tr.waking, err = attach(tr.objs.CtxtopStacksWaking); err != nil {
				b.Fatal(err)
			}
		}, func() {
			tr.sw.Close()
			tr.waking.Close()
			tr.sw, tr.waking = nil, nil
		})
		report("untargeted-on/off", "no target: the filter lookup alone", r)
		if err := tr.SetTargets([]int{threads[0].TID, threads[1].TID}); err != nil {
			b.Fatal(err)
		}
		var raw Raw
		r, _ = paired(10, refresh, func() {
			if err := tr.SetAttached(true); err != nil {
				b.Fatal(err)
			}
		}, func() {
			tr.SetAttached(false)
			tr.Read(&raw)
		})
		report("always-on/off", "both targeted, attached throughout", r)
		tr.SetTargets(nil)

		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			b.Fatalf("bpf_stats: %v", err)
		}
		if tr.sw, err = attach(tr.objs.CtxtopStacksSwitch); err != nil {
			b.Fatal(err)
		}
		if tr.waking, err = attach(tr.objs.CtxtopStacksWaking); err != nil {
			b.Fatal(err)
		}
		perRun := func(label string) {
			progs := []*ebpf.Program{tr.objs.CtxtopStacksSwitch, tr.objs.CtxtopStacksWaking}
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
		perRun("untargeted")
		tids := []int{threads[0].TID, threads[1].TID}
		if err := tr.SetTargets(tids); err != nil {
			b.Fatal(err)
		}
		perRun("targeted")
		stats.Close()
		tr.Close()
	}
}

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
	snap := model.Snapshot{Threads: slices.Clone(threads)}
	c.Read(&snap)
	b.ReportAllocs()
	for b.Loop() {
		time.Sleep(10 * time.Millisecond)
		snap := model.Snapshot{Threads: slices.Clone(threads)}
		c.Read(&snap)
	}
}
