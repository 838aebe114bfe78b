package waketrace

import (
	"runtime"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkTracerOverheadPinnedFutex is the tracer's cost where it is
// highest: a futex ping-pong pinned to one CPU, which wakes and switches
// some 400,000 times a second. One ping-pong runs throughout, and the
// tracer is attached and detached under it in turn; each attached window's
// ns per round trip against the mean of the detached windows either side
// of it is one paired ratio (drift on a shared host hits a window and its
// neighbours alike), and the median of the ratios is the figure. Separate
// processes per run, tried first, varied by ±10% between runs, hiding a
// 5% effect.
//
//   - view-on/off (target ≤ 1.05): the wake-up view as the TUI runs it, a
//     collector read every refresh (0.5 s), which attaches the switch
//     program for the part of each interval its budget allows. 40 windows
//     of one refresh (the one after the collector's first read) between
//     detached ones.
//   - waking-on/off and switch-on/off: the two programs' costs, the
//     switch program's (with the per-CPU counters) being what the per-CPU
//     view pays and the latency windows pay while open. 60 windows of
//     100 ms each.
//
// And the kernel's own accounting of the programs' run time (bpf_stats,
// which costs time of its own, so it is kept out of the windows above).
func BenchmarkTracerOverheadPinnedFutex(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	// The last CPU: CPU 0 takes most of a VM's interrupts.
	cpu := runtime.NumCPU() - 1
	run, err := load.Start(load.Config{Mode: load.ModeFutex, CPUs: []int{cpu}, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Stop()
	time.Sleep(300 * time.Millisecond)
	const settle = 10 * time.Millisecond
	trips := func() uint64 { return run.Progress().RoundTrips }
	// paired alternates on() and off(), measuring windows of window.
	paired := func(n int, window time.Duration, on, off func()) (ratios []float64, offNs float64) {
		return testutil.PairedOverhead(b, trips, n, settle, window, on, off)
	}
	q := func(r []float64, f float64) float64 { return r[int(f*float64(len(r)-1))] }
	report := func(name, what string, r []float64) {
		b.ReportMetric(q(r, .5), name)
		b.Logf("%s: median paired ratio %.3f (quartiles %.3f–%.3f) over %d windows", what, q(r, .5), q(r, .25), q(r, .75), len(r))
	}
	// The view's refresh: ctxtop -d 0.5. The switch program's share of an
	// interval does not depend on its length (down to its 50 ms least).
	const refresh = 500 * time.Millisecond
	b.ReportAllocs()
	for range b.N {
		c := NewCollector()
		r, off := paired(40, refresh, func() {
			c.SetEnabled(true)
			time.Sleep(refresh)
			if w := c.Snapshot(); w == nil || w.Unavailable != "" {
				b.Fatalf("collector: %+v", w)
			}
		}, func() {
			c.Snapshot()
			c.SetEnabled(false)
		})
		b.ReportMetric(off, "ns/rt-off")
		b.Logf("pinned futex, %.0f ns a round trip detached (median of %v windows)", off, refresh)
		report("view-on/off", "wake-up view (collector read every "+refresh.String()+")", r)

		tr, err := Open()
		if err != nil {
			b.Fatal(err)
		}
		setLinks := func(waking, perCPU bool) {
			if tr.waking, err = object.SetLink(tr.waking, tr.objs.CtxtopWaking, waking); err != nil {
				b.Fatal(err)
			}
			if err := tr.SetPerCPU(perCPU); err != nil {
				b.Fatal(err)
			}
		}
		var s model.WakeupSample
		drain := func() {
			if err := tr.Read(&s); err != nil {
				b.Fatal(err)
			}
		}
		r, _ = paired(60, 100*time.Millisecond, func() { setLinks(true, false) }, func() { drain(); setLinks(false, false) })
		report("waking-on/off", "sched_waking program alone", r)
		r, _ = paired(60, 100*time.Millisecond, func() { setLinks(true, true) }, func() { drain(); setLinks(false, false) })
		report("switch-on/off", "with the switch and migration programs too (per-CPU view, latency windows)", r)

		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			b.Fatalf("bpf_stats: %v", err)
		}
		setLinks(true, true)
		progs := []*ebpf.Program{tr.objs.CtxtopWaking, tr.objs.CtxtopSwitch}
		var st0 [2]*ebpf.ProgramStats
		for i, p := range progs {
			if st0[i], err = p.Stats(); err != nil {
				b.Fatal(err)
			}
		}
		n0 := run.Progress().RoundTrips
		time.Sleep(time.Second)
		n1 := run.Progress().RoundTrips
		for i, name := range []string{"waking", "switch"} {
			st1, err := progs[i].Stats()
			if err != nil {
				b.Fatal(err)
			}
			runs := st1.RunCount - st0[i].RunCount
			perRun := float64((st1.Runtime - st0[i].Runtime).Nanoseconds()) / float64(max(runs, 1))
			b.ReportMetric(perRun, "ns/"+name+"-run")
			b.Logf("bpf_stats: %.0f ns a sched_%s run (timing included), %.2f runs a round trip system-wide",
				perRun, name, float64(runs)/float64(max(n1-n0, 1)))
		}
		stats.Close()
		tr.Close()
	}
}

// BenchmarkRead is one refresh's read of the maps with a ping-pong's worth
// of pairs in them.
func BenchmarkRead(b *testing.B) {
	tr, err := Open()
	if err != nil {
		b.Skip(err)
	}
	defer tr.Close()
	var s model.WakeupSample
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.Read(&s); err != nil {
			b.Fatal(err)
		}
	}
}
