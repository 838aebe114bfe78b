package exporter

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// A busy thread that exits between two scrapes must not take its switches
// out of its groups' counters: Prometheus would read the drop as a reset.
func TestBusyThreadExitingKeepsCountersMonotonic(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CTXTOP_EXIT_WORKLOAD=1")
	stdin, out := testutil.StartWorkload(t, cmd)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("workload: %v", err)
	}
	var pid, tid1, tid2 int
	if _, err := fmt.Sscan(line, &pid, &tid1, &tid2); err != nil {
		t.Fatalf("workload said %q: %v", line, err)
	}

	e := pidExporter(t, pid)
	group := strconv.Itoa(pid)
	scrape := func() (proc, threads, busy float64) {
		t.Helper()
		time.Sleep(CacheWindow + 50*time.Millisecond)
		fams := gather(t, e)
		for _, typ := range []string{"voluntary", "involuntary"} {
			v, _ := value(fams, "ctxtop_process_context_switches_total", "group", group, "type", typ)
			proc += v
			v, _ = value(fams, "ctxtop_thread_group_context_switches_total", "group", group, "thread_group", "busy-*", "type", typ)
			busy += v
		}
		threads, _ = value(fams, "ctxtop_thread_group_threads", "group", group, "thread_group", "busy-*")
		return proc, threads, busy
	}

	_, _, _ = scrape()
	procBefore, threadsBefore, busyBefore := scrape()
	if threadsBefore != 2 || busyBefore < 1000 {
		t.Fatalf("before the exit: busy-* has %v threads and %v switches; want 2 threads switching", threadsBefore, busyBefore)
	}
	if _, err := fmt.Fprintln(stdin, "stop"); err != nil {
		t.Fatal(err)
	}
	if line, err := out.ReadString('\n'); err != nil || line != "stopped\n" {
		t.Fatalf("workload: %q %v", line, err)
	}
	for _, tid := range []int{tid1, tid2} {
		for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", pid, tid)); os.IsNotExist(err) {
				break
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("thread %d did not exit", tid)
			}
		}
	}
	procAfter, threadsAfter, busyAfter := scrape()
	if threadsAfter != 0 {
		t.Errorf("after the exit busy-* has %v threads, want 0", threadsAfter)
	}
	if busyAfter < busyBefore {
		t.Errorf("thread group busy-* went from %v to %v switches when its threads exited", busyBefore, busyAfter)
	}
	if procAfter < procBefore {
		t.Errorf("process group went from %v to %v switches when two of its threads exited", procBefore, procAfter)
	}
}

// When every -p target has exited, scrapes still succeed: the host's
// counters, and the groups' final sums with no thread left.
func TestEveryTargetGoneKeepsServing(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	e := pidExporter(t, pid)
	group := strconv.Itoa(pid)
	// Two passes, so that the pass that finds the target gone reuses a
	// buffer that held its thread.
	gather(t, e)
	time.Sleep(CacheWindow + 50*time.Millisecond)
	fams := gather(t, e)
	if n, _ := value(fams, "ctxtop_process_threads", "group", group); n != 1 {
		t.Fatalf("before the exit: %v threads in group %s, want 1", n, group)
	}
	before, _ := value(fams, "ctxtop_process_context_switches_total", "group", group, "type", "voluntary")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	time.Sleep(CacheWindow + 50*time.Millisecond)
	fams = gather(t, e)
	if _, ok := value(fams, "ctxtop_context_switches_total"); !ok {
		t.Errorf("after every target exited: no host counter served")
	}
	if n, ok := value(fams, "ctxtop_process_threads", "group", group); !ok || n != 0 {
		t.Errorf("after every target exited: group %s threads = %v (served %v), want 0", group, n, ok)
	}
	if after, _ := value(fams, "ctxtop_process_context_switches_total", "group", group, "type", "voluntary"); after < before {
		t.Errorf("after every target exited: switches went from %v to %v", before, after)
	}
	if n := e.Samples(); n != 3 {
		t.Errorf("%d passes, want 3", n)
	}
}

// pidExporter is an exporter of process pid alone, its groups named by
// PID; closed when the test ends.
func pidExporter(t *testing.T, pid int) *Exporter {
	t.Helper()
	cfg := sampling(sampler.Config{PIDs: []int{pid}})
	cfg.GroupBy = GroupByPID
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
