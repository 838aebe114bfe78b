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
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

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
	if r.Samples() != 0 {
		t.Errorf("a header alone: %d samples, want none", r.Samples())
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
