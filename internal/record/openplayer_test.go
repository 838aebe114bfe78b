package record

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// windowed is what Next gives over from..to, with stacks folded or not:
// folded, what a visit of that window must hand its reader.
func windowed(t *testing.T, data []byte, from, to time.Time, fold bool) []model.Snapshot {
	t.Helper()
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.SetRange(from, to) {
		t.Fatalf("no sample from %v to %v", from, to)
	}
	p.FoldStacks(fold)
	var out []model.Snapshot
	for {
		s, err := p.Next()
		if errors.Is(err, ErrEnd) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
}

// checker is a Visit.Each that compares each snapshot it is handed with
// the next of want as it comes: a visit's snapshot is not to be kept.
type checker struct {
	t    *testing.T
	name string
	want []model.Snapshot
	n    int
}

func (c *checker) each(s *model.Snapshot) {
	c.t.Helper()
	if c.n < len(c.want) {
		if diff := cmp.Diff(c.want[c.n], *s, sampleCmp...); diff != "" {
			c.t.Errorf("%s: snapshot %d (-replay +visit):\n%s", c.name, c.n, diff)
		}
	}
	c.n++
}

func (c *checker) done() {
	c.t.Helper()
	if c.n != len(c.want) {
		c.t.Errorf("%s: %d snapshots visited, replay shows %d", c.name, c.n, len(c.want))
	}
}

// The pass that reads a file also marks it and hands a reader its
// snapshots: what it gives must be what opening, then marking, then
// playing gives, on intact files and damaged ones, with stacks and
// wake-ups, over the whole file and a window.
func TestOpenPlayerIsOpenThenPlay(t *testing.T) {
	withStacks := record(t, stacked(), WriterOptions{FlushEvery: 3 * time.Second, KeyframeEvery: 9 * time.Second})
	spiky := record(t, spikeRun(), WriterOptions{FlushEvery: 5 * time.Second, KeyframeEvery: 20 * time.Second})
	churn := record(t, recordtest.Run(40, 5, 60, true), WriterOptions{FlushEvery: 5 * time.Second, KeyframeEvery: 20 * time.Second})
	offs := chunkOffsets(t, churn)
	damaged := bytes.Clone(churn)
	damaged[offs[2]+chunkHeaderSize+5] ^= 0xff
	files := map[string][]byte{
		"stacks":    withStacks,
		"spike":     spiky,
		"damaged":   damaged,
		"truncated": churn[:offs[4]+30],
	}
	for name, data := range files {
		ref, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		first, last := ref.Span()
		windows := map[string][2]time.Time{
			"whole":  {},
			"window": {first.Add(4 * time.Second), last.Add(-3 * time.Second)},
			"from":   {first.Add(last.Sub(first) / 2), time.Time{}},
		}
		for wname, w := range windows {
			name := name + "/" + wname
			want := windowed(t, data, w[0], w[1], true)
			if len(want) < 5 {
				t.Fatalf("%s: %d snapshots to compare, too few to say anything", name, len(want))
			}
			c := &checker{t: t, name: name, want: want}
			r, p, err := ParsePlayer(data, model.Options{}, Visit{From: w[0], To: w[1], Each: c.each})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			c.done()

			refp, err := NewPlayer(ref, model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(refp.Marks(), p.Marks(), sampleCmp...); diff != "" {
				t.Errorf("%s: marks (-open then mark +one pass):\n%s", name, diff)
			}
			if diff := cmp.Diff(ref.Notes, r.Notes); diff != "" {
				t.Errorf("%s: notes (-open +one pass):\n%s", name, diff)
			}
			if refp.HasStacks() != p.HasStacks() || refp.HasWakeups() != p.HasWakeups() {
				t.Errorf("%s: stacks %v, wake-ups %v; opened then marked: %v, %v", name,
					p.HasStacks(), p.HasWakeups(), refp.HasStacks(), refp.HasWakeups())
			}
			// The player is left as NewPlayer leaves it: its range
			// whole, before the first sample, folding no stacks.
			if lo, hi := p.Range(); lo != 0 || hi != r.Samples()-1 {
				t.Errorf("%s: range %d..%d after the pass, want 0..%d", name, lo, hi, r.Samples()-1)
			}
			all := windowed(t, data, time.Time{}, time.Time{}, false)
			for k := range 3 {
				s, err := p.Next()
				if err != nil {
					t.Fatalf("%s: next %d: %v", name, k, err)
				}
				if diff := cmp.Diff(all[k], s, sampleCmp...); diff != "" {
					t.Errorf("%s: next %d after the pass (-replay +one pass):\n%s", name, k, diff)
				}
			}
			r.Close()
		}
	}
}

// A file with one sample has no rate: the one pass says so, and still
// gives the recording, whose notes say why.
func TestOpenPlayerOfOneSampleIsEmpty(t *testing.T) {
	data := record(t, recordtest.Run(10, 2, 1, false), WriterOptions{})
	r, p, err := ParsePlayer(data, model.Options{}, Visit{Each: func(*model.Snapshot) { t.Error("a visit of no interval") }})
	if !errors.Is(err, ErrEmpty) || r == nil || p != nil {
		t.Errorf("one sample: recording %v, player %v, error %v; want a recording, no player, ErrEmpty", r != nil, p != nil, err)
	}
	if _, _, err := ParsePlayer([]byte("not a recording"), model.Options{}, Visit{}); !errors.Is(err, ErrNotRecording) {
		t.Errorf("junk: %v, want ErrNotRecording", err)
	}
}
