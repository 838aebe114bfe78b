package record

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// traced is a run of a host with every kind of task change, cgroups,
// wait looks, read times and wake-up reads, with the tracer switched off
// and on again, its per-CPU counters off for a while, and a pair whose
// name is not the one the task list gives its thread.
func traced() []model.Sample {
	s := recordtest.New(60, 10, true)
	s.Steady, s.CgroupsAndWaits, s.ReadTimes, s.Wakeups = true, true, true, true
	in := make([]model.Sample, 40)
	for i := range in {
		in[i] = s.Next()
	}
	for i := 10; i < 13; i++ {
		in[i].Wakeups = nil
	}
	in[13].Wakeups.Since = time.Time{}
	in[20].Wakeups.CPUs = nil
	in[5].Wakeups.Pairs[0].WakerComm = ""
	in[6].Wakeups.Pairs[1].WakeeComm = "renamed-since"
	return in
}

func TestRoundTripOfReadTimesAndWakeups(t *testing.T) {
	in := traced()
	moved := 0
	for _, smp := range in {
		for _, tk := range smp.Tasks {
			if tk.ReadAt > 0 {
				moved++
			}
		}
	}
	if moved == 0 {
		t.Fatal("no task has a read time: the case under test is missing")
	}
	for _, keyEvery := range []time.Duration{9 * time.Second, time.Nanosecond} {
		data := record(t, in, WriterOptions{FlushEvery: 3 * time.Second, KeyframeEvery: keyEvery})
		r, got := decoded(t, data)
		if diff := cmp.Diff(in, got, sampleCmp...); diff != "" {
			t.Errorf("keyframe every %v: samples (-want +got):\n%s", keyEvery, diff)
		}
		if len(r.Notes) != 0 {
			t.Errorf("notes on an intact file: %q", r.Notes)
		}
	}
}

// A pair's names cost nothing when the frame's task list gives them; a
// pseudo-waker's (an interrupt, no thread) is written.
func TestWakeupNamesFromTheTaskListCostNothing(t *testing.T) {
	in := traced()
	var e encoder
	if _, err := e.appendFrame(nil, &in[0], 0, true); err != nil {
		t.Fatal(err)
	}
	b, err := e.appendFrame(nil, &in[1], int64(time.Second), false)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("worker-")) {
		t.Errorf("a delta frame spells out a thread name its task list holds")
	}
	if !bytes.Contains(b, []byte("irq/24-eth0")) {
		t.Errorf("a delta frame lacks the interrupt's name")
	}
}

// A sampler's read times outside a pass are a bug, refused when written
// rather than made into a file a reader refuses.
func TestReadTimesOutsideAPassAreNotWritten(t *testing.T) {
	in := recordtest.Run(5, 1, 1, false)
	for _, at := range []time.Duration{-time.Nanosecond, maxReadAt + 1} {
		in[0].Tasks[2].ReadAt = at
		var e encoder
		if _, err := e.appendFrame(nil, &in[0], 0, true); err == nil {
			t.Errorf("read at %v: written", at)
		}
	}
}

// Read times and wake-up pairs that the frame cannot hold are damage,
// refused before anything is allocated for them.
func TestBadReadTimesAndWakeupsAreRefused(t *testing.T) {
	in := recordtest.Run(10, 2, 2, false)
	var e encoder
	key, err := e.appendFrame(nil, &in[0], 0, true)
	if err != nil {
		t.Fatal(err)
	}
	_, n := protowire.ConsumeVarint(key)
	key = key[n:]
	rt := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = protowire.AppendVarint(b, v)
		}
		return appendMsg(nil, fReadTimes, b)
	}
	wk := func(m []byte) []byte { return appendMsg(nil, fWakeups, m) }
	pairs := func(k, m uint64, rest ...byte) []byte {
		b := protowire.AppendVarint(nil, k)
		b = protowire.AppendVarint(b, m)
		return appendMsg(nil, kPairs, append(b, rest...))
	}
	for name, frame := range map[string][]byte{
		"unit 2^63":                rt(63),
		"a task past the list":     rt(20, 10, 2),
		"a step past an hour":      rt(20, 0, protowire.EncodeZigZag(1<<22)),
		"a read before the sample": rt(20, 0, protowire.EncodeZigZag(-1)),
		"read times cut short":     rt(20, 0),
		"2^40 pairs":               wk(pairs(pairCols, 1<<40, 1, 2, 3)),
		"more pairs than bytes":    wk(pairs(pairCols, 100, make([]byte, 90)...)),
		"pairs cut short":          wk(pairs(pairCols, 2, make([]byte, 15)...)),
		"latency bucket 40":        wk(pairs(pairCols, 1, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20)),
		"a name for no pair":       wk(appendMsg(nil, kNames, append(protowire.AppendTag(nil, nPair, protowire.VarintType), 3))),
		"switches without migrations": wk(append(protowire.AppendTag(nil, kSwitches, protowire.BytesType),
			protowire.AppendBytes(nil, []byte{2, 2})...)),
	} {
		var d decoder
		if err := d.apply(key); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10, func() {
			if err := d.apply(frame); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: apply: %v, want ErrCorrupt", name, err)
			}
		})
		if allocs > 20 {
			t.Errorf("%s: %v allocations for a refused frame", name, allocs)
		}
	}
}

// FuzzDecodeFrame applies arbitrary bytes as a frame after a keyframe: an
// error or a state within the bounds, never a panic. The seeds carry every
// kind of field, stack reads and their tables included.
func FuzzDecodeFrame(f *testing.F) {
	in := stacked()
	var e encoder
	key, err := e.appendFrame(nil, &in[0], 0, true)
	if err != nil {
		f.Fatal(err)
	}
	_, n := protowire.ConsumeVarint(key)
	key = key[n:]
	for i := 1; i < 4; i++ {
		b, err := e.appendFrame(nil, &in[i], int64(i)*int64(time.Second), false)
		if err != nil {
			f.Fatal(err)
		}
		_, n := protowire.ConsumeVarint(b)
		f.Add(b[n:])
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var d decoder
		if err := d.apply(key); err != nil {
			t.Fatal(err)
		}
		if d.apply(frame) != nil {
			return
		}
		var s model.Sample
		d.sample(&s, time.UTC)
		for _, tk := range s.Tasks {
			if tk.ReadAt < 0 || tk.ReadAt > maxReadAt {
				t.Errorf("task %d/%d read at %v", tk.PID, tk.TID, tk.ReadAt)
			}
		}
		if w := s.Wakeups; w != nil && (len(w.Pairs) > maxPairs || len(w.CPUs) > maxCPUs) {
			t.Errorf("%d pairs over %d CPUs", len(w.Pairs), len(w.CPUs))
		}
		if st := s.Stacks; st != nil {
			checkStackBounds(t, st)
		}
	})
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
