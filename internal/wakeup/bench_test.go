package wakeup

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkTracerOverheadPinnedFutex is the tracer's cost where it is
// highest: a futex ping-pong pinned to one CPU, which wakes and switches
// about 400,000 times a second. Half-second runs with the programs attached
// and detached alternate, 16 attached ones each between two detached: the
// median of each attached run's ratio to the mean of its neighbours is the
// figure (paired-on/off, target ≤ 1.05), since drift on a busy host hits a
// run and its neighbours alike. The medians and their ratio are reported
// too, and the kernel's own accounting of the programs' run time
// (bpf_stats, from one more run: it costs time of its own), per round trip
// and as a share of the unattached round trip.
func BenchmarkTracerOverheadPinnedFutex(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	bin := testutil.Binary(b)
	// The last CPU: CPU 0 takes most of a VM's interrupts.
	cpu := strconv.Itoa(runtime.NumCPU() - 1)
	var lastSwitches, lastVoluntary uint64
	run := func() (float64, uint64) {
		out, err := exec.Command(bin, "load", "--mode", "futex", "--cpus", cpu, "--duration", "0.5s", "-o", "json").Output()
		if err != nil {
			b.Fatalf("ctxtop load: %v", err)
		}
		var r struct {
			Ns         float64 `json:"ns_per_round_trip"`
			RoundTrips uint64  `json:"round_trips"`
			Vol        uint64  `json:"switches_voluntary"`
			Invol      uint64  `json:"switches_involuntary"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil || r.Ns <= 0 {
			b.Fatalf("ctxtop load printed %q: %v", out, err)
		}
		lastSwitches, lastVoluntary = r.Vol+r.Invol, r.Vol
		return r.Ns, r.RoundTrips
	}
	var progNs time.Duration
	var progRTs, switches, wakeups uint64
	var perProg [3]ebpf.ProgramStats
	const alternations = 16
	b.ReportAllocs()
	var off, on, paired []float64
	for range b.N {
		off, on, paired = off[:0], on[:0], paired[:0]
		before, _ := run()
		for range alternations {
			tr, err := Open()
			if err != nil {
				b.Fatal(err)
			}
			ns, _ := run()
			on = append(on, ns)
			// The view would read once a refresh; read so the map is
			// drained as it would be.
			var s model.WakeupSample
			if err := tr.Read(&s); err != nil {
				b.Fatal(err)
			}
			tr.Close()
			after, _ := run()
			off = append(off, before)
			// Each attached run against the mean of the unattached runs
			// either side of it: drift on a busy host hits both alike.
			paired = append(paired, 2*ns/(before+after))
			before = after
		}
		off = append(off, before)
		// Then one run with the kernel timing the programs, which costs
		// time of its own, so it is kept out of the runs above.
		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			b.Fatalf("bpf_stats: %v", err)
		}
		tr, err := Open()
		if err != nil {
			b.Fatal(err)
		}
		{
			_, rts := run()
			for i, p := range []*ebpf.Program{tr.objs.CtxtopWaking, tr.objs.CtxtopSwitch, tr.objs.CtxtopMigrate} {
				st, err := p.Stats()
				if err != nil {
					b.Fatal(err)
				}
				progNs += st.Runtime
				perProg[i].Runtime += st.Runtime
				perProg[i].RunCount += st.RunCount
			}
			progRTs += rts
			switches += lastSwitches
			wakeups += lastVoluntary
			tr.Close()
			stats.Close()
		}
	}
	slices.Sort(off)
	slices.Sort(on)
	slices.Sort(paired)
	mOff, mOn, mPaired := off[len(off)/2], on[len(on)/2], paired[len(paired)/2]
	b.ReportMetric(mOff, "ns/rt-off")
	b.ReportMetric(mOn, "ns/rt-on")
	b.ReportMetric(mOn/mOff, "on/off")
	b.ReportMetric(mPaired, "paired-on/off")
	// The fastest runs are the ones the rest of the machine disturbed
	// least: on a busy host their ratio is the steadier one.
	b.ReportMetric(on[0]/off[0], "fastest-on/off")
	perRun := func(i int) float64 {
		return float64(perProg[i].Runtime.Nanoseconds()) / float64(max(perProg[i].RunCount, 1))
	}
	// The waking program runs once per wake-up, which is once per
	// voluntary switch (each ends a sleep), the switch program once per
	// switch; the load reports both.
	est := (perRun(0)*float64(wakeups) + perRun(1)*float64(switches)) / float64(progRTs)
	b.ReportMetric(perRun(0), "ns/waking-run")
	b.ReportMetric(perRun(1), "ns/switch-run")
	b.ReportMetric(1+est/off[0], "est-on/off")
	b.Logf("programs: %.0f ns per sched_waking run, %.0f ns per sched_switch run; %.2f wake-ups and %.2f switches per round trip → about %.0f ns per round trip, %.3f× the fastest unattached one",
		perRun(0), perRun(1), float64(wakeups)/float64(progRTs), float64(switches)/float64(progRTs), est, 1+est/off[0])
	perRT := float64(progNs.Nanoseconds()) / float64(progRTs)
	b.ReportMetric(perRT, "bpf-ns/rt")
	b.ReportMetric(perRT/off[0], "bpf/rt-fastest-off")
	b.Logf("pinned futex ns/round trip, off: median %.0f (fastest %.0f), on: median %.0f (fastest %.0f); median of paired ratios %.3f (%.3f); ratio of medians %.3f; programs ran %.0f ns per round trip (system-wide), %.1f%% of the fastest unattached one",
		mOff, off[0], mOn, on[0], mPaired, paired, mOn/mOff, perRT, 100*perRT/off[0])
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
