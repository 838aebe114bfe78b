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
			t.Errorf("interval to pass %d (-every thread +moved only):\n%s", i, diff)
		}
	}
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

// TestExportRewritesWhatChanged: export copies into a Sample only the
// tasks touched since it last wrote that Sample's array, yet every pass's
// Tasks are the sampler's counters exactly. The Samples are used as the
// pipelines use them: two in turn, one twice in a row (a scrape too soon
// to derive), a copy of an old one's header, whose array a later pass
// wrote, and one whose task a caller changed, saying so by clearing Seq. A
// process that runs every third pass only (cat, woken through its stdin)
// changes in the pass between two writes of one array, which a rewrite of
// this pass's movers alone would leave stale; threads are born midway; in
// churn, a thread is born and another ends every millisecond, so a pass
// can find as many threads as the last, not the same ones.
func TestExportRewritesWhatChanged(t *testing.T) {
	for _, tc := range []struct {
		name        string
		gate, churn bool
	}{{"no-gate", false, false}, {"taskstats", true, false}, {"churn", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			busy := startWorkload(t, 20, true)
			var idle workload
			if tc.churn {
				idle = startWorkload(t, 20, false, "CTXTOP_CHURN=1")
			} else {
				idle = startWorkload(t, 20, false)
			}
			pid, grow := testutil.StartGrowingCThreads(t, 10)
			cat := exec.Command("cat")
			in, err := cat.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cat.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { in.Close(); cat.Wait() })
			s := newSampler(t, Config{Root: "/proc", PIDs: []int{busy.pid, idle.pid, pid, cat.Process.Pid}, NoTaskstats: !tc.gate, NoTaskIter: true})
			var bufs [2]model.Sample
			var old model.Sample
			const passes = 24
			partial := 0
			for i := range passes {
				dst := &bufs[i%2]
				switch {
				case i == 9 || i == 10:
					dst = &bufs[1] // twice in a row
				case i == 15:
					old = bufs[1] // its array is written again at 17
				case i == 19:
					dst = &old
				case i == 21:
					dst.Tasks[0].Comm, dst.Seq = "changed", 0
				case i == 12:
					grow()
				}
				if i%3 == 1 {
					if _, err := in.Write([]byte("x\n")); err != nil {
						t.Fatal(err)
					}
				}
				if _, ok := s.filledSince(dst, len(dst.Tasks)); ok && len(dst.Tasks) == len(s.tasks) {
					partial++
				}
				if err := s.Sample(dst); err != nil {
					t.Fatal(err)
				}
				want := make([]model.TaskCounters, len(s.tasks))
				for j, tk := range s.tasks {
					want[j] = tk.c
				}
				if diff := cmp.Diff(want, dst.Tasks); diff != "" {
					t.Errorf("pass %d: Tasks against the sampler's counters (-want +got):\n%s", i, diff)
				}
				time.Sleep(30 * time.Millisecond)
			}
			if !tc.churn && partial < passes/2 {
				t.Errorf("%d of %d passes rewrote only what changed, want %d+", partial, passes, passes/2)
			}
		})
	}
}
