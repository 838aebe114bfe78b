package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLatencyPercentile(t *testing.T) {
	var h [LatencyBuckets]uint64
	if got := LatencyPercentile(&h, 50); got != 0 {
		t.Errorf("empty histogram: p50 = %v, want 0", got)
	}
	h[10] = 100 // [1024, 2048) ns
	for _, tc := range []struct{ q, want float64 }{{50, 1536}, {100, 2048}, {1, 1024 + 10.24}} {
		if got := LatencyPercentile(&h, tc.q); got != tc.want {
			t.Errorf("one bucket: p%v = %v, want %v", tc.q, got, tc.want)
		}
	}
	h[20] = 1 // one slow wake-up in [1 Mi, 2 Mi) ns
	if got, want := LatencyPercentile(&h, 50), 1024+1024*50.5/100; got != want {
		t.Errorf("p50 = %v, want %v", got, want)
	}
	if got := LatencyPercentile(&h, 99.9); got < 1<<20 {
		t.Errorf("p99.9 = %v, want in the slow bucket", got)
	}
}

func TestComputeWakeups(t *testing.T) {
	t0 := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	lat := func(b int, n uint64) (h [LatencyBuckets]uint64) { h[b] = n; return }
	first := WakeupSample{
		Time:    t0.Add(time.Second),
		CPUs:    []CPUSchedCount{{Switches: 1000, Migrations: 10}, {Switches: 500}},
		Dropped: 3,
	}
	second := WakeupSample{
		Time: t0.Add(3 * time.Second),
		Pairs: []WakeupPairCount{
			{WakerPID: 10, WakerTID: 11, WakerComm: "ping", WakeePID: 10, WakeeTID: 12, WakeeComm: "pong", Wakeups: 2000, Resolved: 2000, CrossCPU: 2000, Latency: lat(14, 2000)},
			// The cross-CPU share is over the resolved wake-ups.
			{WakerPID: 10, WakerTID: 12, WakerComm: "pong", WakeePID: 10, WakeeTID: 11, WakeeComm: "ping", Wakeups: 4000, Resolved: 2000, CrossCPU: 500, Latency: lat(10, 4000)},
			// A second waker of pong: pong's latency is over both. None
			// of its wake-ups resolved yet: no cross-CPU share.
			{WakerPID: 0, WakerTID: 0, WakerComm: "swapper/0", WakeePID: 10, WakeeTID: 12, WakeeComm: "pong", Wakeups: 2000, Latency: lat(10, 2000)},
			{WakerTID: 5, WakeeTID: 6}, // no wake-ups: left out
			// Only the outcome of an earlier wake-up: not listed, but
			// its latency is ping's.
			{WakerTID: 7, WakeeTID: 11, WakeeComm: "ping", Resolved: 1000, Latency: lat(10, 1000)},
		},
		CPUs:    []CPUSchedCount{{Switches: 5000, Migrations: 30}, {Switches: 400}},
		Dropped: 7,
	}
	got := ComputeWakeups(&first, t0, &second)
	want := Wakeups{
		Interval: 2 * time.Second,
		Pairs: []WakeupPair{
			{WakerPID: 10, WakerTID: 12, WakerComm: "pong", WakeePID: 10, WakeeTID: 11, WakeeComm: "ping", PerSec: 2000, CrossCPUPercent: 25,
				LatencyP50Micros: 1.536, LatencyP99Micros: (1024 + 1024*0.99) / 1e3, Resolved: 2000, Timed: 5000},
			{WakerPID: 0, WakerTID: 0, WakerComm: "swapper/0", WakeePID: 10, WakeeTID: 12, WakeeComm: "pong", PerSec: 1000,
				LatencyP50Micros: 2.048, LatencyP99Micros: (16384 + 16384*0.98) / 1e3, Timed: 4000},
			{WakerPID: 10, WakerTID: 11, WakerComm: "ping", WakeePID: 10, WakeeTID: 12, WakeeComm: "pong", PerSec: 1000, CrossCPUPercent: 100,
				LatencyP50Micros: 2.048, LatencyP99Micros: (16384 + 16384*0.98) / 1e3, Resolved: 2000, Timed: 4000},
		},
		// A counter that went backwards (CPU 1) gives no rate, never a negative one.
		PerCPU:  []CPUSchedRates{{SwitchesPerSec: 2000, MigrationsPerSec: 10}, {}},
		Dropped: 4,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ComputeWakeups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]WakeupPair{want.Pairs[1], want.Pairs[2]}, got.WakersOf(12, 5)); diff != "" {
		t.Errorf("WakersOf(12) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]WakeupPair{want.Pairs[0]}, got.WakeesOf(12, 1)); diff != "" {
		t.Errorf("WakeesOf(12, 1) (-want +got):\n%s", diff)
	}
}

func TestComputeWakeupsFirstRead(t *testing.T) {
	t0 := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	cur := WakeupSample{Time: t0.Add(500 * time.Millisecond), CPUs: []CPUSchedCount{{Switches: 100, Migrations: 1}}}
	got := ComputeWakeups(nil, t0, &cur)
	want := Wakeups{Interval: 500 * time.Millisecond, Pairs: []WakeupPair{}, PerCPU: []CPUSchedRates{{SwitchesPerSec: 200, MigrationsPerSec: 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first read (-want +got):\n%s", diff)
	}
	if got := ComputeWakeups(nil, cur.Time, &cur); got.PerCPU != nil || len(got.Pairs) != 0 {
		t.Errorf("zero interval gave rates: %+v", got)
	}
}

// TestIdleWakersOfTwoCPUsInOrder: every CPU's idle task is thread 0, so
// two pairs can tie on rate and both TIDs; their names order them, so a
// refresh does not swap them by the order the kernel's map gave.
func TestIdleWakersOfTwoCPUsInOrder(t *testing.T) {
	t0 := time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	cur := WakeupSample{Time: t0.Add(time.Second), Pairs: []WakeupPairCount{
		{WakerComm: "swapper/1", WakeePID: 10, WakeeTID: 12, WakeeComm: "pong", Wakeups: 5},
		{WakerComm: "swapper/0", WakeePID: 10, WakeeTID: 12, WakeeComm: "pong", Wakeups: 5},
	}}
	w := ComputeWakeups(nil, t0, &cur)
	var got []string
	for _, p := range w.Pairs {
		got = append(got, p.WakerComm)
	}
	if diff := cmp.Diff([]string{"swapper/0", "swapper/1"}, got); diff != "" {
		t.Errorf("wakers (-want +got):\n%s", diff)
	}
}

func TestWakeupsAmong(t *testing.T) {
	ours := func(pid, _ int) bool { return pid == 10 }
	w := Wakeups{Pairs: []WakeupPair{
		{WakerPID: 10, WakerTID: 11, WakeePID: 10, WakeeTID: 12, PerSec: 3000, CrossCPUPercent: 100, LatencyP50Micros: 4, LatencyP99Micros: 20, Resolved: 30, Timed: 30},
		{WakerPID: 10, WakerTID: 12, WakeePID: 10, WakeeTID: 11, PerSec: 1000, CrossCPUPercent: 0, LatencyP50Micros: 8, LatencyP99Micros: 50, Resolved: 10, Timed: 10},
		// Cross-CPU not known: in the rate and the latency, not the share.
		{WakerPID: 10, WakerTID: 13, WakeePID: 10, WakeeTID: 11, PerSec: 1000, LatencyP50Micros: 8, LatencyP99Micros: 10, Timed: 10},
		// Half ours, an interrupt, another process: left out.
		{WakerPID: 10, WakerTID: 11, WakeePID: 20, WakeeTID: 21, PerSec: 9000, CrossCPUPercent: 100, LatencyP99Micros: 900, Resolved: 9, Timed: 9},
		{WakerPID: WakerIRQ, WakerTID: WakerIRQ, WakeePID: 10, WakeeTID: 11, PerSec: 9000, Resolved: 9, Timed: 9},
		{WakerPID: 20, WakerTID: 21, WakeePID: 20, WakeeTID: 22, PerSec: 9000, Resolved: 9, Timed: 9},
	}}
	got, ok := w.Among(ours)
	want := WakeFigures{PerSec: 5000, CrossCPUPercent: 75, LatencyP50Micros: (3000*4 + 1000*8 + 1000*8) / 5000.0, LatencyP99Micros: 50}
	if diff := cmp.Diff(want, got); !ok || diff != "" {
		t.Errorf("ok %v (-want +got)\n%s", ok, diff)
	}
	if _, ok := w.Among(func(pid, _ int) bool { return pid == 99 }); ok {
		t.Error("figures for a set with no pair")
	}
}
