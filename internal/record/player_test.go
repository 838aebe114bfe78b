package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// live is what the live source's pipeline computes from the same samples.
func live(in []model.Sample) []model.Snapshot {
	p := pipeline.New(model.Options{HotThreshold: 1000}, 0)
	var out []model.Snapshot
	for i := 1; i < len(in); i++ {
		out = append(out, p.Step(&in[i-1], &in[i]))
	}
	return out
}

func play(t *testing.T, data []byte) (*Player, []model.Snapshot) {
	t.Helper()
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []model.Snapshot
	for {
		s, err := p.Next()
		if errors.Is(err, ErrEnd) {
			return p, out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
}

func spikeRun() []model.Sample {
	in := recordtest.Run(40, 5, 30, true)
	// A storm at sample 20: a hundred times the usual rate.
	for i := 20; i < len(in); i++ {
		in[i].System.ContextSwitches += 5_000_000 + uint64(i-20)*100
	}
	return in
}

func TestReplayEqualsLive(t *testing.T) {
	in := spikeRun()
	data := record(t, in, WriterOptions{FlushEvery: 4 * time.Second, KeyframeEvery: 9 * time.Second})
	p, got := play(t, data)
	if diff := cmp.Diff(live(in), got, sampleCmp...); diff != "" {
		t.Errorf("snapshots (-live +replay):\n%s", diff)
	}
	marks := p.Marks()
	if !marks[20].Spike.Active {
		t.Errorf("sample 20 is not marked a spike: %+v", marks[20])
	}
}

func TestSeekEqualsPlayingThere(t *testing.T) {
	in := recordtest.Run(40, 5, 150, true)
	data := record(t, in, WriterOptions{KeyframeEvery: 50 * time.Second})
	p, all := play(t, data)
	for _, i := range []int{149, 1, 70, 64, 65, 128, 2, 100, 101} {
		got, err := p.Seek(i)
		if err != nil {
			t.Fatalf("seek %d: %v", i, err)
		}
		if diff := cmp.Diff(all[i-1], got, sampleCmp...); diff != "" {
			t.Errorf("seek %d (-played +seeked):\n%s", i, diff)
		}
	}
	// Next after a seek goes on from there.
	if _, err := p.Seek(10); err != nil {
		t.Fatal(err)
	}
	got, err := p.Next()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all[10], got, sampleCmp...); diff != "" {
		t.Errorf("next after seek (-want +got):\n%s", diff)
	}
}

// chunkOffsets lists where each chunk starts.
func chunkOffsets(t *testing.T, data []byte) []int {
	t.Helper()
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, c := range r.chunks {
		out = append(out, c.off)
	}
	return out
}

func TestTruncatedFileReplaysToItsLastCompleteChunk(t *testing.T) {
	in := recordtest.Run(40, 5, 30, false)
	data := record(t, in, WriterOptions{FlushEvery: 5 * time.Second})
	offs := chunkOffsets(t, data)
	cut := offs[3] + 30 // inside the fourth chunk
	r, err := Parse(data[:cut])
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Samples(); got < 10 || got >= 30 {
		t.Errorf("%d samples from a file cut in its fourth chunk", got)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "stopped at byte") || !strings.Contains(r.Notes[0], "incomplete") {
		t.Errorf("notes: %q", r.Notes)
	}
}

func TestCorruptChunkIsSkippedToTheNextKeyframe(t *testing.T) {
	in := recordtest.Run(40, 5, 60, false)
	data := record(t, in, WriterOptions{FlushEvery: 5 * time.Second, KeyframeEvery: 20 * time.Second})
	offs := chunkOffsets(t, data)
	bad := bytes.Clone(data)
	bad[offs[2]+chunkHeaderSize+5] ^= 0xff // a bit flip in the third chunk
	r, err := Parse(bad)
	if err != nil {
		t.Fatal(err)
	}
	// Chunks are cut once 5 s have passed since the last cut, and before
	// each keyframe (every 20 s): 0-5, 6-10, 11-15, 16-19, 20-... The
	// third chunk is lost and 16-19 wait for the keyframe at 20.
	if diff := cmp.Diff(51, r.Samples()); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(9, r.Lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "checksum mismatch") || !strings.Contains(r.Notes[0], "9 samples lost") {
		t.Errorf("notes: %q", r.Notes)
	}
	// What is left replays as live did, with no rate across the gap. The
	// spike baseline is the median of the rates replayed, and the lost
	// ones are not among them.
	_, got := play(t, bad)
	want := live(in)
	opts := append(sampleCmp, cmpopts.IgnoreFields(model.Spike{}, "Baseline"))
	if diff := cmp.Diff(append(want[:10:10], want[20:]...), got, opts...); diff != "" {
		t.Errorf("snapshots around the gap (-live +replay):\n%s", diff)
	}
}

func TestBadInputIsAClearError(t *testing.T) {
	good := record(t, recordtest.Run(10, 2, 5, false), WriterOptions{})
	newer := bytes.Clone(good)
	newer[len(magic)] = FormatVersion + 1
	for _, tc := range []struct {
		name string
		data []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrNotRecording, "empty"},
		{"text", []byte("hello, this is not a recording\n"), ErrNotRecording, ""},
		{"newer", newer, ErrNewerFormat, fmt.Sprintf("format %d, this ctxtop reads up to %d", FormatVersion+1, FormatVersion)},
		{"cut header", good[:12], ErrCorrupt, "ends inside its header"},
	} {
		_, err := Parse(tc.data)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: got %v, want %v containing %q", tc.name, err, tc.want, tc.msg)
		}
	}
	// A header and nothing else has no samples to show.
	r, err := Parse(good[:bytes.Index(good, chunkSync[:])])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewPlayer(r, model.Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("player over no samples: %v, want ErrEmpty", err)
	}
}

func TestHugeClaimsAllocateNothing(t *testing.T) {
	good := record(t, recordtest.Run(10, 2, 5, false), WriterOptions{})
	off := bytes.Index(good, chunkSync[:])
	bad := bytes.Clone(good)
	binary.LittleEndian.PutUint32(bad[off+8:], 1<<31) // raw length 2 GiB
	r, err := Parse(bad)
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples() != 0 || len(r.Notes) == 0 {
		t.Errorf("samples %d, notes %q", r.Samples(), r.Notes)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(record(&testing.T{}, recordtest.Run(10, 3, 12, true), WriterOptions{FlushEvery: 2 * time.Second, KeyframeEvery: 5 * time.Second}))
	cw := recordtest.New(10, 3, true)
	cw.CgroupsAndWaits = true
	var cws []model.Sample
	for range 12 {
		cws = append(cws, cw.Next())
	}
	f.Add(record(&testing.T{}, cws, WriterOptions{FlushEvery: 2 * time.Second, KeyframeEvery: 5 * time.Second}))
	f.Add(record(&testing.T{}, stacked()[:12], WriterOptions{FlushEvery: 2 * time.Second, KeyframeEvery: 5 * time.Second}))
	f.Add([]byte(magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			return
		}
		defer r.Close()
		p, err := NewPlayer(r, model.Options{})
		if err != nil {
			return
		}
		for range r.Samples() + 1 {
			if _, err := p.Next(); err != nil {
				break
			}
		}
		_, _ = p.Seek(r.Samples() / 2)
	})
}

// TestHugeTaskCountIsRefused feeds a frame whose packed counters claim
// 2^40 tasks: an error, not an allocation.
func TestHugeTaskCountIsRefused(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, fKeyframe, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	var c []byte
	c = protowire.AppendVarint(c, countersPerTask)
	c = protowire.AppendVarint(c, 1<<40)
	c = append(c, 0, 0, 0)
	b = protowire.AppendTag(b, fCounters, protowire.BytesType)
	b = protowire.AppendBytes(b, c)
	var d decoder
	allocs := testing.AllocsPerRun(10, func() {
		d = decoder{}
		if err := d.apply(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("apply: %v, want ErrCorrupt", err)
		}
	})
	if allocs > 10 {
		t.Errorf("%v allocations for a refused frame", allocs)
	}
}

// TestTooManyWaitsOrReasonsAreRefused: a frame claiming more wait looks
// or reasons than a sampler takes is damage, refused before it grows.
func TestTooManyWaitsOrReasonsAreRefused(t *testing.T) {
	key := protowire.AppendVarint(protowire.AppendTag(nil, fKeyframe, protowire.VarintType), 1)
	reason := appendZ(appendStr(nil, rWord, "pipe read"), rN, 1)
	var wait []byte
	wait = appendZ(wait, wPID, 1)
	for range maxReasons + 1 {
		wait = appendMsg(wait, wReason, reason)
	}
	manyReasons := appendMsg(bytes.Clone(key), fWait, wait)
	small := appendZ(nil, wPID, 1)
	manyWaits := bytes.Clone(key)
	for range maxWaits + 1 {
		manyWaits = appendMsg(manyWaits, fWait, small)
	}
	manyCgroups := bytes.Clone(key)
	for i := range maxCgroups + 1 {
		manyCgroups = appendMsg(manyCgroups, fCgroup, appendStr(nil, cPath, strconv.Itoa(i)))
	}
	for name, frame := range map[string][]byte{"reasons": manyReasons, "waits": manyWaits, "cgroups": manyCgroups} {
		var d decoder
		if err := d.apply(frame); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: apply: %v, want ErrCorrupt", name, err)
		}
	}
}

// A recording of some processes replays as live showed them: switches
// outside their threads are not unexplained.
func TestReplayOfSomeProcessesIsPartial(t *testing.T) {
	in := recordtest.Run(10, 2, 3, false)
	var buf bytes.Buffer
	h := testHeader()
	h.PIDs = []int{in[0].Tasks[0].PID}
	w, err := NewWriter(&buf, h, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, got := play(t, buf.Bytes())
	for i, s := range got {
		if !s.Partial || s.UnattributedPerSec != 0 {
			t.Errorf("snapshot %d: partial %v, unattributed %v/s; want partial, none", i, s.Partial, s.UnattributedPerSec)
		}
	}
}
