package record

import (
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// fixtureSamples are the samples testdata/v1-steady.ctxrec and
// testdata/v2-steady.ctxrec hold: written by the format-1 and format-2
// writers (8-second keyframes, 4-second chunks) from this made-up host,
// with steady threads, churn, cgroups and wait looks.
func fixtureSamples() []model.Sample {
	s := recordtest.New(40, 10, true)
	s.Steady = true
	s.CgroupsAndWaits = true
	out := make([]model.Sample, 12)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

// tracedFixtureSamples are the samples testdata/v3-traced.ctxrec holds:
// written by the format-3 writer (8-second keyframes, 4-second chunks) from
// the host of fixtureSamples with read times and wake-up reads too.
func tracedFixtureSamples() []model.Sample {
	s := recordtest.New(40, 10, true)
	s.Steady, s.CgroupsAndWaits, s.ReadTimes, s.Wakeups = true, true, true, true
	out := make([]model.Sample, 12)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

// olderFiles are the fixtures of every older format and what they hold.
var olderFiles = []struct {
	file    string
	version int
	samples func() []model.Sample
}{
	{"testdata/v1-steady.ctxrec", 1, fixtureSamples},
	{"testdata/v2-steady.ctxrec", 2, fixtureSamples},
	{"testdata/v3-traced.ctxrec", 3, tracedFixtureSamples},
}

// A file written by an older ctxtop must replay as it did when written.
func TestOlderFilesReadExactly(t *testing.T) {
	for _, c := range olderFiles {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			r, got := decoded(t, data)
			if r.Header.Version != c.version {
				t.Errorf("header version = %d, want %d", r.Header.Version, c.version)
			}
			if diff := cmp.Diff(testHeader().Start, r.Header.Start, sampleCmp...); diff != "" {
				t.Errorf("header start (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.samples(), got, sampleCmp...); diff != "" {
				t.Errorf("samples (-want +got):\n%s", diff)
			}
			if len(r.Notes) != 0 {
				t.Errorf("notes = %q, want none", r.Notes)
			}
		})
	}
}

// Format 2 writes the run and wait columns in byte planes, format 3 read
// times and wake-ups, format 4 stacks; a file written now says so, so an
// older reader refuses it rather than misread it.
func TestNewFilesAreFormat4(t *testing.T) {
	data := record(t, recordtest.Run(10, 2, 3, false), WriterOptions{})
	if got := data[len(magic)]; got != 4 {
		t.Errorf("version byte = %d, want 4", got)
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.frameBytes(1)
	if err != nil {
		t.Fatal(err)
	}
	var nums []protowire.Number
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			t.Fatal(err)
		}
		b = b[n:]
		if f.num == fCounters || f.num == fPlanes {
			nums = append(nums, f.num)
		}
	}
	if diff := cmp.Diff([]protowire.Number{fPlanes}, nums); diff != "" {
		t.Errorf("packed counter fields of a delta frame (-want +got):\n%s", diff)
	}
}

// TestHugePlaneCountsAreRefused: byte planes whose claimed count or size
// the frame's bytes cannot hold are damage, refused before anything is
// read or allocated for them.
func TestHugePlaneCountsAreRefused(t *testing.T) {
	r, err := Parse(record(t, recordtest.Run(10, 2, 2, false), WriterOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	key, err := r.frameBytes(0)
	if err != nil {
		t.Fatal(err)
	}
	frame := func(planes uint64, bytes int) []byte {
		var c []byte
		c = protowire.AppendVarint(c, countersPerTask)
		c = protowire.AppendVarint(c, 2)
		c = append(c, 0, 0, 0, 0, 0, 0) // indexes, voluntary, involuntary
		c = protowire.AppendVarint(c, planes)
		c = append(c, make([]byte, bytes)...)
		return appendMsg(nil, fPlanes, c)
	}
	for name, b := range map[string][]byte{
		"nine planes":      frame(9, 18),
		"planes past end":  frame(8, 15),
		"2^40 planes":      frame(1<<40, 4),
		"run planes short": frame(2, 3),
	} {
		var d decoder
		if err := d.apply(key); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(10, func() {
			if err := d.apply(b); !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: apply: %v, want ErrCorrupt", name, err)
			}
		})
		if allocs > 10 {
			t.Errorf("%s: %v allocations for a refused frame", name, allocs)
		}
	}
}
