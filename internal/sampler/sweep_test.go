package sampler

import (
	"os/exec"
	"runtime"
	"slices"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// stepped counts the known threads (tids, sorted) the sweep's probes
// made the kernel step over in a pass: those between where each began
// and the process it found.
func stepped(spans []tidRun, tids []int) int {
	n := 0
	for _, sp := range spans {
		lo, _ := slices.BinarySearch(tids, int(sp.first))
		hi, _ := slices.BinarySearch(tids, int(sp.last))
		n += hi - lo
	}
	return n
}

// hostTIDs is the sample's TIDs, sorted.
func hostTIDs(smp *model.Sample) []int {
	tids := make([]int, 0, len(smp.Tasks))
	for _, t := range smp.Tasks {
		tids = append(tids, t.TID)
	}
	slices.Sort(tids)
	return tids
}

// TestSweepFindsWhatTheWalkLacks: a sweep over the real /proc, with the
// runs of every thread on the host but one process's, finds that process,
// names no process the walk reported, and steps over at most half of a
// workload's 2,000 threads (whole listings step over every one).
func TestSweepFindsWhatTheWalkLacks(t *testing.T) {
	lacked := exec.Command("sleep", "60")
	if err := lacked.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { lacked.Process.Kill(); lacked.Wait() }()
	pid := testutil.StartCThreads(t, 2000, false)
	s, err := New(Config{Root: "/proc", NoTaskIter: true, NoCgroups: true, NoTaskstats: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var smp model.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	// What a walk that lacks the sleep would know.
	var keys []uint64
	var walked []int
	for _, task := range smp.Tasks {
		if task.PID == lacked.Process.Pid {
			continue
		}
		keys = append(keys, sortKey(task.PID, task.TID))
		if len(walked) == 0 || walked[len(walked)-1] != task.PID {
			walked = append(walked, task.PID)
		}
	}
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	sw := sweepState{fd: -1}
	whole, err := sw.open(s.rootFD, make([]byte, 32<<10), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sw.fd < 0 {
		t.Fatalf("no sweep over /proc: positions not learnt from a listing of %d processes", len(whole))
	}
	defer sw.close()
	if !slices.Contains(whole, lacked.Process.Pid) || !slices.Contains(whole, pid) {
		t.Fatalf("the whole listing lacks the test's processes")
	}
	sw.makeRuns(keys, order)
	tids := hostTIDs(&smp)
	var workload []int
	for _, task := range smp.Tasks {
		if task.PID == pid {
			workload = append(workload, task.TID)
		}
	}
	var found []int
	steps, own, probes := 0, 0, 0
	for range 100000 {
		found = sw.sweep(found, walked, 4)
		steps += stepped(sw.spans, tids)
		own += stepped(sw.spans, workload)
		probes += sw.probes
		if sw.next == 1 {
			break
		}
	}
	if sw.next != 1 {
		t.Fatalf("the sweep did not end")
	}
	t.Logf("%d processes listed, %d walked, found %v in %d probes, stepping over %d of %d known threads", len(whole), len(walked), found, probes, steps, len(tids))
	if !slices.Contains(found, lacked.Process.Pid) {
		t.Errorf("the sweep found %v: not the process the walk lacked (%d)", found, lacked.Process.Pid)
	}
	for _, p := range found {
		if _, in := slices.BinarySearch(walked, p); in {
			t.Errorf("the sweep found %d, a walked process", p)
		}
	}
	// A probe finds the workload's process and the next starts past its
	// threads: none are stepped over, unless other PIDs were taken among
	// them as they started (see TestSweepEvensTheListing).
	if own > len(workload)/2 {
		t.Errorf("the sweep stepped over %d of the workload's %d threads, want at most %d", own, len(workload), len(workload)/2)
	}
}

// TestSweepEvensTheListing: on a host with a process of 10,000 threads
// and one waking every ms, with the task walk, no pass after the first
// lists /proc whole (the kernel steps over every thread's PID for that:
// 1-2 ms at 10,000, 9 at 100,000, once in 16 passes per 10,000 threads,
// which made that pass two or three times a steady one), and no pass's
// share of the sweep steps over the workload's threads that run on from
// its PID. None, as a rule; but when other PIDs were taken among them as
// they started, a run of them after a long gap is stepped over once a
// sweep: some 30 ns a
// thread in the kernel, cheaper than asking each PID of the gap with a
// system call (sweepState.headless). It counts threads, not time, so it
// holds on a busy host; the host's other processes are logged, not
// bounded, for the same reason.
func TestSweepEvensTheListing(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the walk steps over idle threads on amd64 alone")
	}
	pid := testutil.StartCThreads(t, 10000, true)
	s := walkSampler(t)
	defer s.Close()
	var smp model.Sample
	var steps, own, workload []int
	// Past the pass the whole listing would come in again.
	for i := 0; i == 0 || i < int(relistEvery(len(smp.Tasks)))+2; i++ {
		if err := s.Sample(&smp); err != nil {
			t.Fatal(err)
		}
		tids := hostTIDs(&smp)
		workload = workload[:0]
		for _, task := range smp.Tasks {
			if task.PID == pid {
				workload = append(workload, task.TID)
			}
		}
		switch {
		case s.it.listedWhole:
			steps, own = append(steps, len(tids)), append(own, len(workload))
		case s.it.sw.fd >= 0:
			steps = append(steps, stepped(s.it.sw.spans, tids))
			own = append(own, stepped(s.it.sw.spans, workload))
		default:
			steps, own = append(steps, 0), append(own, 0)
		}
		if i == 0 && !s.it.listedWhole {
			t.Errorf("the first pass did not list /proc whole")
		}
	}
	// The workload's TIDs in runs of consecutive numbers: the first starts
	// at its PID; any other follows a gap, PIDs taken by other processes
	// as it started. Only such runs may be stepped over.
	headless, first := 0, true
	for i := range workload {
		if i > 0 && workload[i] != workload[i-1]+1 {
			first = false
		}
		if !first {
			headless++
		}
	}
	t.Logf("known threads stepped over by each pass's listing: %v; of the workload's: %v; workload threads after a gap in its TIDs: %d of %d",
		steps, own, headless, len(workload))
	if m := slices.Max(own[1:]); m > headless {
		t.Errorf("a pass after the first stepped over %d of the workload's threads listing /proc (%v), want at most the %d that follow a gap in its TIDs",
			m, own, headless)
	}
}
