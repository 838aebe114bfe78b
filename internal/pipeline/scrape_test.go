package pipeline

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// A pass sooner than MinInterval after the last derived one comes back at
// once with its counters and no Snapshot, and the base stays: the next
// Snapshot is over the whole time since, as the player drops a sample too
// close to the one before. Its verdicts are the model's.
func TestScrapesDeriveNoIntervalShorterThanMin(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var gone bool
	passes := []model.Sample{
		{Time: t0},
		// 20 switches in 10 ms would be 2,000/s.
		{Time: t0.Add(10 * time.Millisecond)},
		// 1,220 over the 1.01 s since the first: 1,208/s.
		{Time: t0.Add(1010 * time.Millisecond)},
		{Time: t0.Add(1020 * time.Millisecond)},
	}
	for i, vol := range []uint64{0, 20, 1220, 1230} {
		passes[i].Tasks = []model.TaskCounters{{PID: 10, TID: 10, StartTime: 1, Comm: "a", ProcessComm: "a", VoluntarySwitches: vol}}
	}
	next := 0
	s := newScrapes(func(dst *model.Sample) error {
		if gone {
			dst.Time = t0.Add(2 * time.Second)
			return sampler.ErrTargetsGone
		}
		*dst = passes[next]
		next++
		return nil
	}, model.Options{HotThreshold: 1000}, time.Second)

	type pass struct {
		Vol      uint64
		Interval time.Duration // of the Snapshot; -1 for none
		Hot      bool
	}
	var got []pass
	for range passes {
		smp, snap, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		p := pass{Vol: smp.Tasks[0].VoluntarySwitches, Interval: -1}
		if snap != nil {
			p.Interval = snap.Interval
			p.Hot = len(snap.Threads) == 1 && snap.Threads[0].Hot
		}
		got = append(got, p)
	}
	want := []pass{{0, -1, false}, {20, -1, false}, {1220, 1010 * time.Millisecond, true}, {1230, -1, false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("passes (-want +got):\n%s", diff)
	}

	gone = true
	smp, snap, err := s.Next()
	if !errors.Is(err, ErrTargetsGone) {
		t.Fatalf("every target gone: err %v, want ErrTargetsGone", err)
	}
	if snap != nil || len(smp.Tasks) != 0 || !smp.Time.Equal(t0.Add(2*time.Second)) {
		t.Errorf("every target gone: Snapshot %v, %d tasks at %v; want no Snapshot, the pass's host counters and no task", snap, len(smp.Tasks), smp.Time)
	}
}

// Scrapes in a row are each answered at once by a pass of the real
// sampler, where Live.Next would wait out MinInterval (5 s here).
func TestScrapesNeverWait(t *testing.T) {
	s, err := NewScrapes(ScrapeConfig{Sampler: sampler.Config{Root: filepath.Join(testutil.RepoRoot(), "testdata", "proc")}, Interval: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	for i := range 3 {
		smp, snap, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if len(smp.Tasks) == 0 || snap != nil {
			t.Errorf("pass %d: %d tasks, Snapshot %v; want the fixture's tasks and no Snapshot", i, len(smp.Tasks), snap != nil)
		}
	}
	if d := time.Since(start); d >= 5*time.Second {
		t.Errorf("three passes took %v: a pass waited out the minimum interval", d)
	}
}

// A Snapshot over passes a scrape too soon left underived is given the
// hint over its whole span: the union of the passes' Moved, and only
// while every pass held the tasks of the one before. Its rates are those
// of the same passes without any hint; a thread that moved only in the
// underived pass keeps its rate.
func TestScrapesHintSpansUnderivedPasses(t *testing.T) {
	t0 := time.Unix(1000, 0)
	task := func(tid int, vol uint64) model.TaskCounters {
		return model.TaskCounters{PID: 10, TID: tid, StartTime: 1, Comm: "a", ProcessComm: "a", VoluntarySwitches: vol}
	}
	type pass struct {
		at     time.Duration
		vols   [3]uint64
		same   bool // holds the tasks of the pass before
		moved  []int32
		newSeq bool
	}
	cases := []struct {
		name      string
		passes    []pass
		wantHint  bool
		wantMoved []int32
	}{
		{"chained", []pass{
			{0, [3]uint64{0, 0, 0}, false, nil, true},
			{10 * time.Millisecond, [3]uint64{500, 0, 0}, true, []int32{0}, true},
			{1000 * time.Millisecond, [3]uint64{500, 0, 800}, true, []int32{2}, true},
		}, true, []int32{0, 2}},
		{"broken by a pass whose tasks changed", []pass{
			{0, [3]uint64{0, 0, 0}, false, nil, true},
			{10 * time.Millisecond, [3]uint64{500, 0, 0}, false, nil, true},
			{1000 * time.Millisecond, [3]uint64{500, 0, 800}, true, []int32{2}, true},
		}, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			derive := func(hints bool) (*model.Snapshot, *model.Sample) {
				var seqs []uint64
				next := 0
				s := newScrapes(func(dst *model.Sample) error {
					p := c.passes[next]
					next++
					dst.Time = t0.Add(p.at)
					dst.Tasks = dst.Tasks[:0]
					for i, v := range p.vols {
						dst.Tasks = append(dst.Tasks, task(10+i, v))
					}
					dst.Seq, dst.SameTasksAs, dst.Moved = 0, 0, dst.Moved[:0]
					if hints {
						dst.Seq = model.NextSeq()
						if p.same {
							dst.SameTasksAs = seqs[len(seqs)-1]
							dst.Moved = append(dst.Moved, p.moved...)
						}
						seqs = append(seqs, dst.Seq)
					}
					return nil
				}, model.Options{HotThreshold: 100}, time.Second)
				var snap *model.Snapshot
				var smp *model.Sample
				for range c.passes {
					var err error
					if smp, snap, err = s.Next(); err != nil {
						t.Fatal(err)
					}
				}
				if snap == nil {
					t.Fatal("no Snapshot after the last pass")
				}
				if hints {
					gotHint := smp.SameTasksAs != 0 && smp.SameTasksAs == seqs[0]
					if gotHint != c.wantHint || (c.wantHint && !cmp.Equal(c.wantMoved, smp.Moved)) {
						t.Errorf("the derived pass's hint: over the base %v, Moved %v; want %v, %v", gotHint, smp.Moved, c.wantHint, c.wantMoved)
					}
				}
				cp := *snap
				cp.Threads = append([]model.ThreadRates(nil), snap.Threads...)
				return &cp, smp
			}
			want, _ := derive(false)
			got, _ := derive(true)
			rates := func(s *model.Snapshot) map[int]float64 {
				m := map[int]float64{}
				for _, th := range s.Threads {
					m[th.TID] = th.VoluntaryPerSec
				}
				return m
			}
			if diff := cmp.Diff(rates(want), rates(got)); diff != "" {
				t.Errorf("rates with hints differ from without (-want +got):\n%s", diff)
			}
			if r := rates(got)[10]; r != 500 {
				t.Errorf("the thread that moved only in the underived pass: %v/s, want 500", r)
			}
		})
	}
}
