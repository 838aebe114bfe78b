package sampler

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// niceSpin is a workload of one thread that never blocks, on CPU 0 at the
// given nice value; it exits when its stdin closes.
func niceSpin(nice int) {
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	var cpu0 unix.CPUSet
	cpu0.Set(0)
	if err := unix.SchedSetaffinity(0, &cpu0); err != nil {
		fmt.Fprintln(os.Stderr, "pinning to CPU 0:", err)
		os.Exit(2)
	}
	// Linux's nice is per thread: who 0 is this one.
	if err := unix.Setpriority(unix.PRIO_PROCESS, 0, nice); err != nil {
		fmt.Fprintln(os.Stderr, "nice:", err)
		os.Exit(2)
	}
	go func() {
		var b [1]byte
		os.Stdin.Read(b[:])
		os.Exit(0)
	}()
	fmt.Println("ready")
	//lint:ignore SA5002 the point is a thread that never blocks.
	for {
	}
}

func startNiceSpin(t *testing.T, nice int) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CTXTOP_NICE_SPIN="+strconv.Itoa(nice))
	cmd.Stderr = os.Stderr
	_, out := testutil.StartWorkload(t, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("spinner did not start: %q %v", line, err)
	}
	return cmd.Process.Pid
}

func findTask(s *model.Sample, tid int) *model.TaskCounters {
	for i := range s.Tasks {
		if s.Tasks[i].TID == tid {
			return &s.Tasks[i]
		}
	}
	return nil
}

// TestWaitStaysWithinEachThreadsInterval runs three spinners at nice 0 and
// one at nice 19 on CPU 0. The nice-19 one gets the CPU about one time in
// two hundred, so each of its run-queue waits lasts longer than the 100 ms
// between samples, and the kernel adds each wait to its counter whole when
// it finally runs: the counter grows by more than the interval holds. WAIT%
// must stay within the time the thread did not run, with the rest reported
// as earlier wait, on a machine as busy as it may be.
func TestWaitStaysWithinEachThreadsInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("spins three CPUs' worth of threads on CPU 0 for a few seconds")
	}
	var pids []int
	for range 3 {
		pids = append(pids, startNiceSpin(t, 0))
	}
	starved := startNiceSpin(t, 19)
	pids = append(pids, starved)
	s := newSampler(t, Config{Root: "/proc", PIDs: pids, NoCgroups: true})

	var a, b model.Sample
	prev, cur := &a, &b
	mustSample(t, s, prev)
	late, intervals := 0, 0
	var maxAdded, maxWait float64
	// Until the kernel has reported a wait longer than its interval three
	// times: how long that takes depends on the machine's load, not on a
	// guess.
	deadline := time.Now().Add(60 * time.Second)
	for late < 3 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		mustSample(t, s, cur)
		intervals++
		snap := model.Compute(prev, cur, model.Options{})
		for _, th := range snap.Threads {
			p, c := findTask(prev, th.TID), findTask(cur, th.TID)
			if p == nil || c == nil {
				t.Fatalf("thread %d has a row but not two reads", th.TID)
			}
			span := cur.Time.Sub(prev.Time) + c.ReadAt - p.ReadAt
			added, ran := float64(c.WaitNs-p.WaitNs), float64(c.RunNs-p.RunNs)
			if th.TID == starved {
				maxAdded = max(maxAdded, added/float64(span)*100)
				if added+ran > float64(span) {
					late++
				}
			}
			maxWait = max(maxWait, th.WaitPercent)
			if free := max(0, 100-th.CPUPercent); th.WaitPercent > free+1e-9 {
				t.Errorf("thread %d: WAIT%% %.2f with CPU%% %.2f: more than the %.2f%% of its %v it did not run",
					th.TID, th.WaitPercent, th.CPUPercent, free, span)
			}
			// Every nanosecond the kernel added is reported, in
			// WAIT% or as earlier wait.
			if got := th.WaitPercent/100*float64(span) + float64(th.EarlierWait); math.Abs(got-added) > 1e3 {
				t.Errorf("thread %d: WAIT%% %.2f of %v and earlier %v make %.0f ns; the kernel added %.0f",
					th.TID, th.WaitPercent, span, th.EarlierWait, got, added)
			}
		}
		prev, cur = cur, prev
	}
	t.Logf("%d intervals; the starved thread's counter grew by up to %.0f%% of its interval; WAIT%% peaked at %.2f", intervals, maxAdded, maxWait)
	if late == 0 {
		t.Fatalf("in %d intervals the nice-19 spinner never had a wait longer than its interval reported: the case under test did not happen", intervals)
	}
}

// TestReadTimesFollowThePass: a pass over 3,000 threads takes several
// milliseconds, so the threads read last carry later read times than the
// first, every one a whole number of grains within the pass.
func TestReadTimesFollowThePass(t *testing.T) {
	pid := startIdleThreads(t, 3000)
	// Without the gate every thread is read, as for an unprivileged user.
	// The /proc path, file by file: the BPF task walk reads every thread
	// in one call and stamps them all alike.
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}, NoTaskstats: true, NoCgroups: true, NoTaskIter: true})
	var smp model.Sample
	mustSample(t, s, &smp)
	mustSample(t, s, &smp)
	elapsed := time.Since(smp.Time)
	var last time.Duration
	for i, tk := range smp.Tasks {
		if tk.ReadAt%model.ReadAtGrain != 0 || tk.ReadAt < 0 || tk.ReadAt > elapsed {
			t.Fatalf("task %d: read at %v: want a multiple of %v within the pass's %v", tk.TID, tk.ReadAt, model.ReadAtGrain, elapsed)
		}
		if tk.ReadAt < last {
			t.Errorf("task %d (#%d): read at %v, before the task ahead of it (%v)", tk.TID, i, tk.ReadAt, last)
		}
		last = tk.ReadAt
	}
	first := smp.Tasks[0].ReadAt
	if last-first < model.ReadAtGrain {
		t.Errorf("%d threads read from %v to %v into a pass of %v: want the last read at least a grain (%v) after the first",
			len(smp.Tasks), first, last, elapsed, model.ReadAtGrain)
	}
}
