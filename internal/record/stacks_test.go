package record

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// stacked is a run with stack reads: the tracer on, off for a while (a
// detail view closed), unavailable once, and on again.
func stacked() []model.Sample {
	s := recordtest.New(60, 10, true)
	// Not steady: random rates make the busy threads hot, so WHY names
	// their stacks' functions.
	s.CgroupsAndWaits, s.ReadTimes, s.Wakeups, s.Stacks = true, true, true, true
	in := make([]model.Sample, 40)
	for i := range in {
		in[i] = s.Next()
	}
	// A live source's first sample is its baseline, taken before any
	// read of the tracer.
	in[0].Stacks = nil
	for i := 12; i < 15; i++ {
		in[i].Stacks = nil
	}
	in[20].Stacks = &model.StackSample{Time: in[20].Time, Unavailable: "stack tracer: no BTF"}
	in[25].Stacks.KernelHidden = true
	return in
}

func TestRoundTripOfStacks(t *testing.T) {
	in := stacked()
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

// A stack's names are written once per keyframe period: a delta frame
// whose stacks were all seen names none of them again.
func TestStackNamesAreWrittenOnce(t *testing.T) {
	in := stacked()
	var e encoder
	key, err := e.appendFrame(nil, &in[1], 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(key, []byte("consumer_wait")) {
		t.Fatal("the keyframe does not name consumer_wait")
	}
	for i := 2; i < 5; i++ {
		b, err := e.appendFrame(nil, &in[i], int64(i)*int64(time.Second), false)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("consumer_wait")); n > 0 {
			t.Errorf("frame %d names consumer_wait %d times", i, n)
		}
	}
}

// Files written before stacks were kept have none: every sample's
// Stacks is nil (TestOlderFilesReadExactly checks the rest).
func TestOlderFilesHaveNoStacks(t *testing.T) {
	for _, c := range olderFiles {
		_, got := decoded(t, mustRead(t, c.file))
		for i, s := range got {
			if s.Stacks != nil {
				t.Errorf("%s: sample %d has stacks", c.file, i)
			}
		}
	}
}

// The tables start again before they would pass what a reader keeps, and
// a read too big for them alone is refused when written.
func TestStackTablesStartAgainBeforeTheirBound(t *testing.T) {
	in := recordtest.Run(10, 2, 4, false)
	read := func(from, stacks int) *model.StackSample {
		st := &model.StackSample{}
		for k := range stacks {
			var fr []string
			for j := range 200 {
				fr = append(fr, fmt.Sprintf("f%d_%d", from, k*200+j))
			}
			st.Blocked = append(st.Blocked, model.StackCount{TID: in[0].Tasks[0].TID, PID: in[0].Tasks[0].PID, Stack: model.Stack{Frames: fr}, Count: 1})
		}
		return st
	}
	for i := range in {
		in[i].Stacks = read(i, 150) // 30,000 names each: a reset every other read
	}
	_, got := decoded(t, record(t, in, WriterOptions{}))
	if diff := cmp.Diff(in, got, sampleCmp...); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	in[1].Stacks = read(1, 400)
	var e encoder
	if _, err := e.appendFrame(nil, &in[1], 0, true); err == nil {
		t.Error("a read of 80,000 names was written")
	}
}

// Stack fields that a frame cannot hold or that name nothing defined are
// damage, refused before anything is allocated for them.
func TestBadStacksAreRefused(t *testing.T) {
	in := recordtest.Run(10, 2, 2, false)
	var e encoder
	key, err := e.appendFrame(nil, &in[0], 0, true)
	if err != nil {
		t.Fatal(err)
	}
	_, n := protowire.ConsumeVarint(key)
	key = key[n:]
	msg := func(parts ...[]byte) []byte { return appendMsg(nil, fStacks, bytes.Join(parts, nil)) }
	vs := func(v ...uint64) []byte {
		var b []byte
		for _, x := range v {
			b = protowire.AppendVarint(b, x)
		}
		return b
	}
	// Each starts the tables again: the decoder keeps what a refused
	// frame defined before its damage, and the frame is applied again.
	str := append(vs(gReset<<3, 1), appendStr(nil, gString, "f")...)
	stack := func(fields ...[]byte) []byte { return appendMsg(nil, gStack, bytes.Join(fields, nil)) }
	for name, frame := range map[string][]byte{
		"2^40 rows":              msg(appendMsg(nil, gBlocked, vs(blockedCols, 1<<40, 2, 0, 0, 1))),
		"more rows than bytes":   msg(appendMsg(nil, gBlocked, vs(blockedCols, 100, 2, 0, 0, 1))),
		"three values a row":     msg(appendMsg(nil, gBlocked, vs(3, 1, 2, 0, 0))),
		"a stack never defined":  msg(vs(gReset<<3, 1), appendMsg(nil, gBlocked, vs(blockedCols, 1, 2, 0, 0, 1))),
		"a string never defined": msg(vs(gReset<<3, 1), stack(appendMsg(nil, eFrames, vs(1)))),
		"a waker never defined":  msg(str, stack(appendMsg(nil, eFrames, vs(1))), appendMsg(nil, gWoken, vs(wokenCols, 1, 2, 0, 9, 0, 1))),
		"kernel frames past all": msg(str, stack(appendMsg(nil, eFrames, vs(1)), appendZ(nil, eKernelFrames, 2))),
		"no thread":              msg(str, stack(appendMsg(nil, eFrames, vs(1))), appendMsg(nil, gBlocked, vs(blockedCols, 1, 0, 0, 0, 1))),
		"a target at 0":          msg(appendMsg(nil, gTargets, vs(0))),
		"too many frames":        msg(str, stack(appendMsg(nil, eFrames, bytes.Repeat(vs(1), maxStackFrames+1)))),
		"rows cut short":         msg(appendMsg(nil, gBlocked, append(vs(blockedCols, 2, 2, 0, 0, 1, 2, 0), 0x80))),
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

// Names from a file are untrusted: cut and sanitized as task names are.
func TestStackNamesFromAFileAreSanitized(t *testing.T) {
	in := recordtest.Run(10, 2, 2, false)
	tk := in[1].Tasks[0]
	in[1].Stacks = &model.StackSample{Woken: []model.StackCount{{TID: tk.TID, PID: tk.PID, Waker: "w\x1b[2J",
		Stack: model.Stack{Frames: []string{"evil\x1b]0;title\x07", strings.Repeat("x", 10000)}, Own: "evil\x1b]0;title\x07"}, Count: 3}}}
	_, got := decoded(t, record(t, in, WriterOptions{}))
	c := got[1].Stacks.Woken[0]
	for _, s := range append([]string{c.Waker, c.Own}, c.Frames...) {
		if strings.ContainsAny(s, "\x1b\x07") || len(s) > maxString {
			t.Errorf("name %q (%d bytes) from a file", s[:min(len(s), 40)], len(s))
		}
	}
}

// checkStackBounds fails t for a decoded read past the reader's bounds.
func checkStackBounds(t *testing.T, st *model.StackSample) {
	t.Helper()
	if len(st.Blocked) > maxStackCounts || len(st.Woken) > maxStackCounts || len(st.Targets) > maxStackTarget {
		t.Errorf("%d blocked, %d woken counts, %d targets", len(st.Blocked), len(st.Woken), len(st.Targets))
	}
	for _, c := range append(st.Blocked, st.Woken...) {
		if c.TID <= 0 || c.PID <= 0 || len(c.Frames) > maxStackFrames || c.KernelFrames < 0 || c.KernelFrames > len(c.Frames) {
			t.Errorf("count of %d/%d: %d frames, %d kernel", c.PID, c.TID, len(c.Frames), c.KernelFrames)
		}
		for _, n := range append([]string{c.Waker, c.Own, c.NoFramePointers}, c.Frames...) {
			if len(n) > 4*maxString {
				t.Errorf("a name of %d bytes", len(n))
			}
		}
	}
}

// A count's weight (the events its samples stand for), a stack's
// truncation reason and the share of the interval attached come back as
// written.
func TestRoundTripOfWeightsAndTruncation(t *testing.T) {
	in := stacked()
	n := 0
	for i := range in {
		st := in[i].Stacks
		if st == nil || st.Unavailable != "" {
			continue
		}
		for j := range st.Blocked {
			st.Blocked[j].Weight = st.Blocked[j].Count * uint64(1+i%7)
			if j == 0 {
				st.Blocked[j].Truncated = "no unwind info in libjit.so"
			}
			n++
		}
		for j := range st.Woken {
			st.Woken[j].Weight = st.Woken[j].Count * 3
		}
		// Attached for a window of the interval.
		st.Attached = float64(1+i%4) / 4
	}
	if n == 0 {
		t.Fatal("no stack counts to weigh")
	}
	data := record(t, in, WriterOptions{FlushEvery: 3 * time.Second, KeyframeEvery: 9 * time.Second})
	_, got := decoded(t, data)
	if diff := cmp.Diff(in, got, sampleCmp...); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}
