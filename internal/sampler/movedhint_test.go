package sampler

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestProcPathHintIsExact: the /proc path says which tasks moved when a
// pass found the last one's tasks, and the model's snapshots are the same
// whether it visits only those or every task; a pass in which a thread
// was born names no earlier sample.
func TestProcPathHintIsExact(t *testing.T) {
	busy := startWorkload(t, 20, true)
	pid, grow := testutil.StartGrowingCThreads(t, 10)
	s, err := New(Config{Root: "/proc", PIDs: []int{busy.pid, pid}, NoTaskstats: true, NoTaskIter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const passes, born = 12, 6
	got := make([]model.Sample, passes)
	for i := range got {
		if i == born {
			grow()
		}
		if err := s.Sample(&got[i]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	hinted := 0
	for i := 1; i < passes; i++ {
		cur := &got[i]
		switch {
		case i == born:
			if cur.SameTasksAs != 0 {
				t.Errorf("pass %d, a thread born: SameTasksAs %d, want 0", i, cur.SameTasksAs)
			}
		case cur.SameTasksAs == got[i-1].Seq && got[i-1].Seq != 0:
			if len(cur.Moved) > 0 && len(cur.Moved) < len(cur.Tasks) {
				hinted++
			}
		default:
			t.Logf("pass %d: no hint (SameTasksAs %d, last Seq %d)", i, cur.SameTasksAs, got[i-1].Seq)
		}
	}
	if hinted < passes/2 {
		t.Errorf("%d of %d passes said which tasks moved, want %d+", hinted, passes-1, passes/2)
	}
	plain := make([]model.Sample, passes)
	for i, smp := range got {
		smp.Seq, smp.SameTasksAs, smp.Moved = 0, 0, nil
		plain[i] = smp
	}
	opts := model.Options{HotThreshold: 100, Partial: true}
	var hint model.Snapshot
	for i := 1; i < passes; i++ {
		whole := model.Compute(&plain[i-1], &plain[i], opts)
		model.ComputeInto(&hint, &got[i-1], &got[i], opts)
		if diff := cmp.Diff(whole, hint, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("interval to pass %d (-every task +moved only):\n%s", i, diff)
		}
	}
}

// BenchmarkComputeWithProcHint10k is the model's interval over two /proc
// passes of 10,000 idle threads and one waking every millisecond, with
// the sampler's hint (hinted) and without it (every task visited).
func BenchmarkComputeWithProcHint10k(b *testing.B) {
	pid := testutil.StartCThreads(b, 10000, true)
	settle(b, pid)
	s, err := New(Config{Root: "/proc", PIDs: []int{pid}, NoCgroups: true, NoTaskstats: true, NoTaskIter: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var prev, cur model.Sample
	for _, smp := range []*model.Sample{&prev, &cur} {
		time.Sleep(100 * time.Millisecond)
		if err := s.Sample(smp); err != nil {
			b.Fatal(err)
		}
	}
	if cur.SameTasksAs != prev.Seq {
		b.Fatal("the second pass gave no hint")
	}
	plain := cur
	plain.SameTasksAs, plain.Moved = 0, nil
	opts := model.Options{HotThreshold: 100, Partial: true}
	for name, c := range map[string]*model.Sample{"hinted": &cur, "every-task": &plain} {
		b.Run(name, func(b *testing.B) {
			var snap model.Snapshot
			b.ReportAllocs()
			for b.Loop() {
				model.ComputeInto(&snap, &prev, c, opts)
			}
			b.ReportMetric(float64(len(c.Moved)), "moved")
		})
	}
}
