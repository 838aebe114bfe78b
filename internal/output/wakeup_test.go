package output

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

func wakeups() *model.Wakeups {
	return &model.Wakeups{
		Interval: time.Second,
		Pairs: []model.WakeupPair{
			{WakerPID: 4100, WakerTID: 4102, WakerComm: "ping-futex", WakeePID: 4100, WakeeTID: 4103, WakeeComm: "pong-futex",
				PerSec: 98000.456, CrossCPUPercent: 99.5, LatencyP50Micros: 23.456, LatencyP99Micros: 61.2, Resolved: 100, Timed: 100},
			{WakerPID: 4100, WakerTID: 4103, WakerComm: "pong-futex", WakeePID: 4100, WakeeTID: 4102, WakeeComm: "ping-futex",
				PerSec: 97990, CrossCPUPercent: 100, LatencyP50Micros: 22.1, LatencyP99Micros: 58, Resolved: 100, Timed: 100},
			{WakerPID: 0, WakerTID: 0, WakerComm: "swapper/1", WakeePID: 812, WakeeTID: 830, WakeeComm: "esc\x1b[2Jname",
				// None of its wake-ups resolved yet: no cross-CPU share.
				PerSec: 12.5, LatencyP50Micros: 3.2, LatencyP99Micros: 9.9, Timed: 100},
			// Wake-ups in interrupts: no thread to name.
			{WakerPID: model.WakerTimer, WakerTID: model.WakerTimer, WakerComm: model.WakerTimerComm, WakeePID: 900, WakeeTID: 901, WakeeComm: "poll-sleeper",
				PerSec: 999.91, CrossCPUPercent: 0, LatencyP50Micros: 4, LatencyP99Micros: 30, Resolved: 100, Timed: 100},
			{WakerPID: model.WakerSoftIRQ, WakerTID: model.WakerSoftIRQ, WakerComm: model.WakerSoftIRQComm, WakeePID: 7, WakeeTID: 7, WakeeComm: "rcu_preempt",
				PerSec: 5, CrossCPUPercent: 0, LatencyP50Micros: 4, LatencyP99Micros: 30, Resolved: 5, Timed: 5},
		},
		Dropped: 17,
	}
}

func TestTextWakeups(t *testing.T) {
	var b bytes.Buffer
	s := snapshot()
	s.Wakeups = wakeups()
	// --top 2 limits the pairs too; without it the third pair, with a
	// hostile name and no cross-CPU share yet, shows.
	if err := NewText(&b, Options{Top: 2}).Write(s); err != nil {
		t.Fatal(err)
	}
	w := NewText(&b, Options{})
	if err := w.Write(s); err != nil {
		t.Fatal(err)
	}
	s.Wakeups = &model.Wakeups{Unavailable: "wake-ups unavailable: needs root, or CAP_BPF and CAP_PERFMON"}
	if err := w.Write(s); err != nil {
		t.Fatal(err)
	}
	golden(t, "wakeups", b.Bytes())
}

func TestJSONWakeups(t *testing.T) {
	var b bytes.Buffer
	w := NewJSON(&b, Options{})
	s := snapshot()
	if err := w.Write(s); err != nil {
		t.Fatal(err)
	}
	s.Wakeups = wakeups()
	if err := w.Write(s); err != nil {
		t.Fatal(err)
	}
	golden(t, "wakeups", b.Bytes())

	var without, with map[string]any
	lines := bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	if err := json.Unmarshal(lines[0], &without); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(lines[1], &with); err != nil {
		t.Fatal(err)
	}
	if _, ok := without["wakeups"]; ok {
		t.Errorf("report without --wakeups has a wakeups key")
	}
	pairs, _ := with["wakeups"].([]any)
	if len(pairs) != 5 {
		t.Fatalf("wakeups = %v, want 5 pairs", with["wakeups"])
	}
	if v, ok := pairs[2].(map[string]any)["cross_cpu_pct"]; !ok || v != nil {
		t.Errorf("cross_cpu_pct of a pair with nothing resolved = %v, want null", v)
	}
	// An interrupt is no thread: no PID or TID a script could look up.
	for _, p := range pairs[3:] {
		m := p.(map[string]any)
		if pid, ok := m["waker_pid"]; !ok || pid != nil {
			t.Errorf("%v: waker_pid = %v, want null", m["waker_comm"], pid)
		}
		if tid, ok := m["waker_tid"]; !ok || tid != nil {
			t.Errorf("%v: waker_tid = %v, want null", m["waker_comm"], tid)
		}
	}
	if got := pairs[2].(map[string]any)["waker_tid"]; got != float64(0) {
		t.Errorf("the idle task's waker_tid = %v, want 0", got)
	}
	var keys []string
	for k := range pairs[0].(map[string]any) {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"cross_cpu_pct", "latency_p50_us", "latency_p99_us", "per_s", "wakee_comm", "wakee_pid", "wakee_tid", "waker_comm", "waker_pid", "waker_tid"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("wake-up keys (-want +got):\n%s", diff)
	}
	if got := with["wakeups_dropped"]; got != float64(17) {
		t.Errorf("wakeups_dropped = %v, want 17", got)
	}
}

// TestJSONWakeupsUnavailable: without the tracer a report says why, and
// gives no figure it could not measure.
func TestJSONWakeupsUnavailable(t *testing.T) {
	var b bytes.Buffer
	s := snapshot()
	const why = "wake-ups unavailable: needs root, or CAP_BPF and CAP_PERFMON"
	s.Wakeups = &model.Wakeups{Unavailable: why}
	if err := NewJSON(&b, Options{}).Write(s); err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if got := r["wakeups_unavailable"]; got != why {
		t.Errorf("wakeups_unavailable = %v, want %q", got, why)
	}
	if got, ok := r["wakeups_dropped"]; ok {
		t.Errorf("wakeups_dropped = %v without a tracer, want none", got)
	}
}

// TestJSONWakeupsWithin: under --pid, JSON sums the processes' wake-ups
// among themselves, with the figures the load panel shows for a load.
func TestJSONWakeupsWithin(t *testing.T) {
	s := snapshot()
	s.Wakeups = wakeups()
	for _, tc := range []struct {
		pids []int
		want any
	}{
		{nil, nil},
		// The ping-pong pair only: the timer's and other processes' wake-ups are not theirs.
		{[]int{4100, 900}, map[string]any{"per_s": 195990.46, "cross_cpu_pct": 99.75, "latency_p50_us": 22.78, "latency_p99_us": 61.2}},
		// A process that woke nobody of its own.
		{[]int{812}, nil},
	} {
		var b bytes.Buffer
		if err := NewJSON(&b, Options{PIDs: tc.pids}).Write(s); err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(b.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, r["wakeups_within"]); diff != "" {
			t.Errorf("--pid %v: wakeups_within (-want +got)\n%s", tc.pids, diff)
		}
	}
}
