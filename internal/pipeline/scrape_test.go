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
