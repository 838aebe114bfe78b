package sampler

import (
	"io"
	"os/exec"
	"slices"
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
	checkHintChangesNothing(t, got)
}

// TestWalkHintIsExact is TestProcPathHintIsExact for the BPF task walk,
// as root: a walk pass that found the last one's threads says which
// moved (the busy thread, an idle one poked awake now and then, every
// thread of a process whose main thread was renamed), and the
// model's snapshots are the same whether it visits only those or every
// thread; a pass in which a thread was born names no earlier sample.
func TestWalkHintIsExact(t *testing.T) {
	busy := startWorkload(t, 20, true)
	idle := startWorkload(t, 20, false)
	pid, grow := testutil.StartGrowingCThreads(t, 10)
	cmd := exec.Command(testutil.CTool(t, "internal/testutil/cthreads/cthreads.c"), "10")
	named, namedOut := testutil.StartWorkload(t, cmd)
	if line, err := namedOut.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("cthreads did not start: %q %v", line, err)
	}
	s, err := New(Config{Root: "/proc", PIDs: []int{busy.pid, idle.pid, pid, cmd.Process.Pid}, NoTaskstats: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Source() != SourceTaskIter {
		t.Skipf("the task walk does not serve here: %s", s.SourceNote())
	}
	const passes, born, renamed = 16, 8, 12
	got := make([]model.Sample, passes)
	for i := range got {
		if i == born {
			grow()
		}
		if i%3 == 1 {
			idle.poke(t)
		}
		if i == renamed {
			// The main thread runs to rename itself, so the walk reads
			// the new name, which every thread's ProcessComm takes.
			if _, err := io.WriteString(named, "rename renamed\n"); err != nil {
				t.Fatal(err)
			}
			if line, err := namedOut.ReadString('\n'); err != nil || line != "ok\n" {
				t.Fatalf("cthreads did not rename itself: %q %v", line, err)
			}
		}
		if err := s.Sample(&got[i]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := countComm(&got[passes-1], "renamed"); n < 10 {
		t.Errorf("%d threads took the renamed process's name, want 10+", n)
	}
	hinted, poked := 0, 0
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
			for _, j := range cur.Moved {
				if cur.Tasks[j].PID == idle.pid {
					poked++
					break
				}
			}
			// What the hint promises, beyond what the snapshots show (an
			// idle thread's process name is in no snapshot): every
			// thread it leaves out is as it was, but for ReadAt.
			for j := range cur.Tasks {
				if _, moved := slices.BinarySearch(cur.Moved, int32(j)); moved {
					continue
				}
				was, is := got[i-1].Tasks[j], cur.Tasks[j]
				was.ReadAt = is.ReadAt
				if diff := cmp.Diff(was, is); diff != "" {
					t.Errorf("pass %d, task %d changed but not in Moved (-was +is):\n%s", i, j, diff)
				}
			}
		default:
			t.Logf("pass %d: no hint (SameTasksAs %d, last Seq %d)", i, cur.SameTasksAs, got[i-1].Seq)
		}
	}
	if hinted < passes/2 {
		t.Errorf("%d of %d passes said which threads moved, want %d+", hinted, passes-1, passes/2)
	}
	if poked == 0 {
		t.Errorf("no hinted pass named a poked thread of the idle process")
	}
	checkHintChangesNothing(t, got)
}

// countComm counts the tasks of s whose process is named name.
func countComm(s *model.Sample, name string) int {
	n := 0
	for _, c := range s.Tasks {
		if c.ProcessComm == name {
			n++
		}
	}
	return n
}

// BenchmarkComputeWithProcHint10k is the model's interval over two /proc
// passes of 10,000 idle threads and one waking every millisecond, with
// the sampler's hint (hinted) and without it (every task visited).
func BenchmarkComputeWithProcHint10k(b *testing.B) {
	benchComputeWithHint(b, Config{Root: "/proc", NoTaskstats: true, NoTaskIter: true})
}

// BenchmarkComputeWithWalkHint10k is the same over two passes of the BPF
// task walk, as root.
func BenchmarkComputeWithWalkHint10k(b *testing.B) {
	benchComputeWithHint(b, Config{Root: "/proc", NoTaskstats: true})
}

func benchComputeWithHint(b *testing.B, cfg Config) {
	pid := testutil.StartCThreads(b, 10000, true)
	settle(b, pid)
	cfg.PIDs, cfg.NoCgroups = []int{pid}, true
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if !cfg.NoTaskIter && s.Source() != SourceTaskIter {
		b.Skipf("the task walk does not serve here: %s", s.SourceNote())
	}
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

// checkHintChangesNothing: each interval of passes derived with their
// hints is the one derived from the same passes without them.
func checkHintChangesNothing(t *testing.T, got []model.Sample) {
	t.Helper()
	plain := make([]model.Sample, len(got))
	for i, smp := range got {
		smp.Seq, smp.SameTasksAs, smp.Moved = 0, 0, nil
		plain[i] = smp
	}
	opts := model.Options{HotThreshold: 100, Partial: true}
	var hint model.Snapshot
	for i := 1; i < len(got); i++ {
		whole := model.Compute(&plain[i-1], &plain[i], opts)
		model.ComputeInto(&hint, &got[i-1], &got[i], opts)
		if diff := cmp.Diff(whole, hint, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("interval to pass %d (-every thread +moved only):\n%s", i, diff)
		}
	}
}
