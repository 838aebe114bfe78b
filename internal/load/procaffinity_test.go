package load

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cpusAllowed is every thread's Cpus_allowed_list in process pid, by TID.
func cpusAllowed(t *testing.T, pid int) map[string]string {
	t.Helper()
	dir := "/proc/" + itoa(pid) + "/task/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(dir + e.Name() + "/status")
		if err != nil {
			continue // exited
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				out[e.Name()] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

func same(m map[string]string, v string) map[string]string {
	out := map[string]string{}
	for k := range m {
		out[k] = v
	}
	return out
}

// TestGoroutinePinsWholeProcess: goroutine mode with --cpus pins every
// thread of the workload process, the ones the runtime starts during the
// run too, and none of the process that started it.
func TestGoroutinePinsWholeProcess(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) < 2 {
		t.Skip("needs two allowed CPUs to tell a pinned thread from an unpinned one")
	}
	before := cpusAllowed(t, os.Getpid())
	cpu := allowed[len(allowed)-1]
	r, err := Start(Config{Mode: ModeGoroutine, CPUs: []int{cpu}, Duration: 10 * time.Second})
	if err != nil {
		t.Fatalf("goroutine mode on CPU %d: %v", cpu, err)
	}
	time.Sleep(100 * time.Millisecond) // the runtime starts threads as the goroutines run
	pids := r.Progress().PIDs
	if len(pids) != 1 {
		t.Fatalf("workload processes %v, want one", pids)
	}
	during := cpusAllowed(t, pids[0])
	if len(during) < 2 {
		t.Errorf("%d threads in the workload process", len(during))
	}
	if diff := cmp.Diff(same(during, itoa(cpu)), during); diff != "" {
		t.Errorf("workload threads' Cpus_allowed_list during a run pinned to CPU %d (-want +got):\n%s", cpu, diff)
	}
	s := r.Stop()
	if s.RoundTrips == 0 || !cmp.Equal(s.CPUs, []int{cpu}) {
		t.Errorf("summary %+v", s)
	}
	// The pinning is the workload process's alone.
	after := cpusAllowed(t, os.Getpid())
	for tid, v := range after {
		if b, ok := before[tid]; ok && b != v {
			t.Errorf("this process's thread %s: Cpus_allowed_list %s, was %s", tid, v, b)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
