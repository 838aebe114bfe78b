package record_test

// The replay tests: a recording played through the pipeline's player gives
// what the pipeline gave live from the same samples. They are an external
// test package, since the player (in pipeline) imports record.

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// live is what the live source's pipeline computes from the same samples.
func live(in []model.Sample) []model.Snapshot {
	it := pipeline.NewIntervals(&pairs{in: in}, model.Options{HotThreshold: 1000}, 0)
	var out []model.Snapshot
	for range len(in) - 1 {
		var s model.Snapshot
		if err := it.Next(&s); err != nil {
			panic(err)
		}
		out = append(out, s)
	}
	return out
}

// openPlayer is pipeline.OpenPlayer of a file holding data.
func openPlayer(t *testing.T, data []byte, opts model.Options, v pipeline.Visit) (*record.Recording, *pipeline.Player, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.ctxrec")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return pipeline.OpenPlayer(path, opts, v)
}

// pairs is a raw source over samples in memory: each Read is the next
// interval, as a sampler taking them would give it.
type pairs struct {
	in []model.Sample
	i  int
}

func (p *pairs) Read() (prev, cur *model.Sample, err error) {
	p.i++
	return &p.in[p.i-1], &p.in[p.i], nil
}

func play(t *testing.T, data []byte) (*pipeline.Player, []model.Snapshot) {
	t.Helper()
	r, err := record.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []model.Snapshot
	for {
		s, err := p.Next()
		if errors.Is(err, pipeline.ErrEnd) {
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
	data := record.Record(t, in, record.WriterOptions{FlushEvery: 4 * time.Second, KeyframeEvery: 9 * time.Second})
	p, got := play(t, data)
	if diff := cmp.Diff(live(in), got, record.SampleCmp...); diff != "" {
		t.Errorf("snapshots (-live +replay):\n%s", diff)
	}
	marks := p.Marks()
	if !marks[20].Spike.Active {
		t.Errorf("sample 20 is not marked a spike: %+v", marks[20])
	}
}

func TestSeekEqualsPlayingThere(t *testing.T) {
	in := recordtest.Run(40, 5, 150, true)
	data := record.Record(t, in, record.WriterOptions{KeyframeEvery: 50 * time.Second})
	p, all := play(t, data)
	for _, i := range []int{149, 1, 70, 64, 65, 128, 2, 100, 101} {
		got, err := p.Seek(i)
		if err != nil {
			t.Fatalf("seek %d: %v", i, err)
		}
		if diff := cmp.Diff(all[i-1], got, record.SampleCmp...); diff != "" {
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
	if diff := cmp.Diff(all[10], got, record.SampleCmp...); diff != "" {
		t.Errorf("next after seek (-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(record.Record(&testing.T{}, recordtest.Run(10, 3, 12, true), record.WriterOptions{FlushEvery: 2 * time.Second, KeyframeEvery: 5 * time.Second}))
	cw := recordtest.New(10, 3, true)
	cw.CgroupsAndWaits = true
	var cws []model.Sample
	for range 12 {
		cws = append(cws, cw.Next())
	}
	f.Add(record.Record(&testing.T{}, cws, record.WriterOptions{FlushEvery: 2 * time.Second, KeyframeEvery: 5 * time.Second}))
	f.Add(record.Record(&testing.T{}, record.Stacked()[:12], record.WriterOptions{FlushEvery: 2 * time.Second, KeyframeEvery: 5 * time.Second}))
	f.Add([]byte(record.Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := record.Parse(data)
		if err != nil {
			return
		}
		defer r.Close()
		p, err := pipeline.NewPlayer(r, model.Options{})
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

// A recording of some processes replays as live showed them: switches
// outside their threads are not unexplained.
// What is left of a file with a damaged chunk replays as live did, with no
// rate across the gap. The spike baseline is the median of the rates
// replayed, and the lost ones are not among them.
func TestDamagedFileReplaysAsLiveAroundTheGap(t *testing.T) {
	in := recordtest.Run(40, 5, 60, false)
	data := record.Record(t, in, record.WriterOptions{FlushEvery: 5 * time.Second, KeyframeEvery: 20 * time.Second})
	offs := record.ChunkOffsets(t, data)
	bad := bytes.Clone(data)
	bad[offs[2]+record.ChunkHeaderSize+5] ^= 0xff // a bit flip in the third chunk
	_, got := play(t, bad)
	want := live(in)
	opts := append(record.SampleCmp, cmpopts.IgnoreFields(model.Spike{}, "Baseline"))
	if diff := cmp.Diff(append(want[:10:10], want[20:]...), got, opts...); diff != "" {
		t.Errorf("snapshots around the gap (-live +replay):\n%s", diff)
	}
}

// A header and nothing else has no samples to show.
func TestPlayerOfNoSamplesIsEmpty(t *testing.T) {
	good := record.Record(t, recordtest.Run(10, 2, 5, false), record.WriterOptions{})
	r, err := record.Parse(good[:bytes.Index(good, record.ChunkSync[:])])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pipeline.NewPlayer(r, model.Options{}); !errors.Is(err, record.ErrEmpty) {
		t.Errorf("player over no samples: %v, want ErrEmpty", err)
	}
}

func TestReplayOfSomeProcessesIsPartial(t *testing.T) {
	in := recordtest.Run(10, 2, 3, false)
	var buf bytes.Buffer
	h := record.TestHeader()
	h.PIDs = []int{in[0].Tasks[0].PID}
	w, err := record.NewWriter(&buf, h, record.WriterOptions{})
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

// windowed is what Next gives over from..to, with stacks folded or not:
// folded, what a visit of that window must hand its reader.
func windowed(t *testing.T, data []byte, from, to time.Time, fold bool) []model.Snapshot {
	t.Helper()
	r, err := record.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.NewPlayer(r, model.Options{})
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
		if errors.Is(err, pipeline.ErrEnd) {
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
		if diff := cmp.Diff(c.want[c.n], *s, record.SampleCmp...); diff != "" {
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
	withStacks := record.Record(t, record.Stacked(), record.WriterOptions{FlushEvery: 3 * time.Second, KeyframeEvery: 9 * time.Second})
	spiky := record.Record(t, spikeRun(), record.WriterOptions{FlushEvery: 5 * time.Second, KeyframeEvery: 20 * time.Second})
	churn := record.Record(t, recordtest.Run(40, 5, 60, true), record.WriterOptions{FlushEvery: 5 * time.Second, KeyframeEvery: 20 * time.Second})
	offs := record.ChunkOffsets(t, churn)
	damaged := bytes.Clone(churn)
	damaged[offs[2]+record.ChunkHeaderSize+5] ^= 0xff
	files := map[string][]byte{
		"stacks":    withStacks,
		"spike":     spiky,
		"damaged":   damaged,
		"truncated": churn[:offs[4]+30],
	}
	for name, data := range files {
		ref, err := record.Parse(data)
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
			r, p, err := openPlayer(t, data, model.Options{}, pipeline.Visit{From: w[0], To: w[1], Each: c.each})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			c.done()

			refp, err := pipeline.NewPlayer(ref, model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(refp.Marks(), p.Marks(), record.SampleCmp...); diff != "" {
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
				if diff := cmp.Diff(all[k], s, record.SampleCmp...); diff != "" {
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
	data := record.Record(t, recordtest.Run(10, 2, 1, false), record.WriterOptions{})
	r, p, err := openPlayer(t, data, model.Options{}, pipeline.Visit{Each: func(*model.Snapshot) { t.Error("a visit of no interval") }})
	if !errors.Is(err, record.ErrEmpty) || r == nil || p != nil {
		t.Errorf("one sample: recording %v, player %v, error %v; want a recording, no player, record.ErrEmpty", r != nil, p != nil, err)
	}
	if _, _, err := openPlayer(t, []byte("not a recording"), model.Options{}, pipeline.Visit{}); !errors.Is(err, record.ErrNotRecording) {
		t.Errorf("junk: %v, want record.ErrNotRecording", err)
	}
}

// A busy host's own level is not a spike; a burst of three times it is, for
// exactly as long as it lasts. The made-up burst starts and ends on sample
// boundaries, so no interval holds half of it: on a real host the interval
// in which a burst begins or ends holds part of it, and may fall either
// side of the line.
func TestMarksFlagOnlyTheBurstOnABusyHost(t *testing.T) {
	s := recordtest.New(40, 5, true)
	// 60,000 switches a second per CPU on 2 CPUs, ±5%; three times that
	// over samples 40 to 44 (counting from 1), which are marks 39 to 43.
	s.BusyRate, s.BusyNoise, s.StormFactor = 120_000, 0.05, 3
	s.StormFrom, s.StormTo = 40, 45
	in := make([]model.Sample, 90)
	for i := range in {
		in[i] = s.Next()
	}
	p, _ := play(t, record.Record(t, in, record.WriterOptions{}))
	var got []int
	for i, m := range p.Marks() {
		if m.Spike.Active {
			got = append(got, i)
		}
	}
	if diff := cmp.Diff([]int{39, 40, 41, 42, 43}, got); diff != "" {
		t.Errorf("marked spikes (-want +got):\n%s", diff)
	}
	// The baseline is the busy level, not the burst.
	if b := p.Marks()[43].Spike.Baseline; math.Abs(b-120_000) > 6_000 {
		t.Errorf("baseline at the burst's last sample %v, want 120,000 ±5%%", b)
	}
}

// Each thread's rates are over its own interval live; a replay must use
// the same read times.
func TestReplayWithReadTimesEqualsLive(t *testing.T) {
	in := record.Traced()
	_, got := play(t, record.Record(t, in, record.WriterOptions{KeyframeEvery: 9 * time.Second}))
	if diff := cmp.Diff(live(in), got, record.SampleCmp...); diff != "" {
		t.Errorf("snapshots (-live +replay):\n%s", diff)
	}
}

// Files written before read times and wake-ups were kept replay as they
// did: every task read at its sample's time.
func TestOlderFilesReplayAsLive(t *testing.T) {
	for i := range record.OlderFiles {
		file, samples := record.OlderFile(i)
		_, got := play(t, record.MustRead(t, file))
		if diff := cmp.Diff(live(samples), got, record.SampleCmp...); diff != "" {
			t.Errorf("%s: snapshots (-live +replay):\n%s", file, diff)
		}
	}
}

// Replay makes the same stacks (shares over the window, WHY's "in FUNC",
// folded stacks) from the recorded reads as live made from the reads, and
// a seek the same as playing there.
func TestReplayOfStacksEqualsLive(t *testing.T) {
	in := record.Stacked()
	data := record.Record(t, in, record.WriterOptions{FlushEvery: 4 * time.Second, KeyframeEvery: 9 * time.Second})
	want := live(in)
	p, got := play(t, data)
	if diff := cmp.Diff(want, got, record.SampleCmp...); diff != "" {
		t.Errorf("snapshots (-live +replay):\n%s", diff)
	}
	named := 0
	for _, s := range got {
		for _, th := range s.Threads {
			if len(th.BlockedAt) > 0 && th.BlockedAt[0].Own != "" && th.Why.Own == th.BlockedAt[0].Own && strings.HasSuffix(th.Why.String(), " in "+th.BlockedAt[0].Own) {
				named++
			}
		}
	}
	if named == 0 {
		t.Error("no replayed thread has a WHY naming its stack's function: the case under test is missing")
	}
	if got[30].Stacks == nil || got[30].Stacks.Refreshes != model.DefaultStackWindow {
		t.Errorf("sample 31's stacks: %+v, want a full window", got[30].Stacks)
	}
	for _, i := range []int{31, 14, 16, 21, 39, 2, 30} {
		s, err := p.Seek(i)
		if err != nil {
			t.Fatalf("seek %d: %v", i, err)
		}
		if diff := cmp.Diff(got[i-1], s, record.SampleCmp...); diff != "" {
			t.Errorf("seek %d (-played +seeked):\n%s", i, diff)
		}
	}
	p.FoldStacks(true)
	s, err := p.Seek(30)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Stacks.Folded) == 0 || !strings.Contains(strings.Join(s.Stacks.Folded[0].Frames, ";"), "[off-cpu]") {
		t.Errorf("folded stacks of a replay: %v", s.Stacks.Folded)
	}
}

// A player knows whether its recording holds wake-ups and stacks at all,
// so a replay can say "none recorded" instead of an empty view.
func TestPlayerSaysWhatWasRecorded(t *testing.T) {
	for _, c := range []struct {
		name            string
		wakeups, stacks bool
		wantW, wantS    bool
	}{
		{"plain", false, false, false, false},
		{"wakeups", true, false, true, false},
		{"stacks", false, true, false, true},
		{"both", true, true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := recordtest.New(20, 5, false)
			s.Wakeups, s.Stacks = c.wakeups, c.stacks
			in := make([]model.Sample, 6)
			for i := range in {
				in[i] = s.Next()
			}
			p, _ := play(t, record.Record(t, in, record.WriterOptions{}))
			if p.HasWakeups() != c.wantW || p.HasStacks() != c.wantS {
				t.Errorf("HasWakeups %v, HasStacks %v; want %v, %v", p.HasWakeups(), p.HasStacks(), c.wantW, c.wantS)
			}
		})
	}
}

// A range with no sample in it (SetRange false: after the last sample, or
// before the first) plays nothing: Next and Seek end, they do not panic.
func TestEmptyRangeEndsThePlay(t *testing.T) {
	in := recordtest.Run(10, 2, 6, false)
	p, _ := play(t, record.Record(t, in, record.WriterOptions{}))
	first, last := p.Recording().Span()
	for name, w := range map[string][2]time.Time{
		"after the last":   {last.Add(time.Hour), time.Time{}},
		"before the first": {time.Time{}, first.Add(-time.Hour)},
	} {
		if p.SetRange(w[0], w[1]) {
			t.Fatalf("%s: SetRange found a sample", name)
		}
		if _, err := p.Next(); !errors.Is(err, pipeline.ErrEnd) {
			t.Errorf("%s: Next: %v, want ErrEnd", name, err)
		}
		if _, err := p.Seek(3); !errors.Is(err, pipeline.ErrEnd) {
			t.Errorf("%s: Seek: %v, want ErrEnd", name, err)
		}
	}
}
