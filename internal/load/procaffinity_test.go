package load

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cpusAllowed is every thread's Cpus_allowed_list, by TID.
func cpusAllowed(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
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

// blockThreads makes the runtime start n more OS threads: each goroutine
// locks its thread and blocks in read(2), so the others need threads of
// their own. Writing to the returned pipe releases them.
func blockThreads(t *testing.T, n int) (release func()) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	var started, done sync.WaitGroup
	for range n {
		started.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			started.Done()
			var b [1]byte
			syscall.Read(fds[0], b[:])
		}()
	}
	started.Wait()
	time.Sleep(50 * time.Millisecond) // let them reach read(2)
	return func() {
		syscall.Write(fds[1], make([]byte, n))
		done.Wait()
		syscall.Close(fds[0])
		syscall.Close(fds[1])
	}
}

// TestGoroutinePinsWholeProcess: goroutine mode with --cpus pins every
// thread of the process, the ones the runtime starts during the run too,
// and gives every thread its mask back when the run stops.
func TestGoroutinePinsWholeProcess(t *testing.T) {
	allowed, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) < 2 {
		t.Skip("needs two allowed CPUs to tell a pinned thread from an unpinned one")
	}
	before := cpusAllowed(t)
	orig := before[itoa(os.Getpid())]
	cpu := allowed[len(allowed)-1]
	r, err := Start(Config{Mode: ModeGoroutine, CPUs: []int{cpu}, Duration: 10 * time.Second})
	if err != nil {
		t.Fatalf("goroutine mode on CPU %d: %v", cpu, err)
	}
	release := blockThreads(t, 4)
	during := cpusAllowed(t)
	if len(during) <= len(before) {
		t.Errorf("%d threads during the run, %d before: the test started none", len(during), len(before))
	}
	if diff := cmp.Diff(same(during, itoa(cpu)), during); diff != "" {
		t.Errorf("threads' Cpus_allowed_list during a run pinned to CPU %d (-want +got):\n%s", cpu, diff)
	}
	release()
	s := r.Stop()
	if s.RoundTrips == 0 || !cmp.Equal(s.CPUs, []int{cpu}) {
		t.Errorf("summary %+v", s)
	}
	after := cpusAllowed(t)
	if diff := cmp.Diff(same(after, orig), after); diff != "" {
		t.Errorf("threads' Cpus_allowed_list after Stop, want %s (-want +got):\n%s", orig, diff)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
