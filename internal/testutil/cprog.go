package testutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CTool compiles the C program src (relative to the repository root, like
// "internal/testutil/cthreads/cthreads.c") with cc into tb's temporary
// directory and returns its path.
func CTool(tb testing.TB, src string) string {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), strings.TrimSuffix(filepath.Base(src), ".c"))
	cmd := exec.Command("cc", "-O2", "-pthread", "-o", out, filepath.Join(repoRoot(), src))
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("compiling %s: %v\n%s", src, err, b)
	}
	return out
}

// StartCThreads runs n idle threads in one C process (cthreads.c: 16 KiB
// stacks, so 100,000 fit) for the rest of the test, and with busy one more
// that wakes every millisecond. It returns the process's PID.
func StartCThreads(tb testing.TB, n int, busy bool) int {
	tb.Helper()
	args := []string{strconv.Itoa(n)}
	if busy {
		args = append(args, "busy")
	}
	cmd := exec.Command(CTool(tb, "internal/testutil/cthreads/cthreads.c"), args...)
	cmd.Stderr = os.Stderr
	_, out := StartWorkload(tb, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		tb.Fatalf("cthreads %d did not start: %q %v", n, line, err)
	}
	return cmd.Process.Pid
}

// StartGrowingCThreads is StartCThreads for a process that is to grow:
// each call of grow starts one more idle thread in it and returns once
// that thread runs.
func StartGrowingCThreads(tb testing.TB, n int) (pid int, grow func()) {
	tb.Helper()
	cmd := exec.Command(CTool(tb, "internal/testutil/cthreads/cthreads.c"), strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	in, out := StartWorkload(tb, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		tb.Fatalf("cthreads %d did not start: %q %v", n, line, err)
	}
	return cmd.Process.Pid, func() {
		tb.Helper()
		if _, err := io.WriteString(in, "grow\n"); err != nil {
			tb.Fatal(err)
		}
		if line, err := out.ReadString('\n'); err != nil || line != "ok\n" {
			tb.Fatalf("cthreads did not start a thread: %q %v", line, err)
		}
	}
}

// CFloor is the C pread floor (cfloor.c) over one process's threads.
type CFloor struct {
	in  io.Writer
	out *bufio.Reader
	// Threads is how many schedstat files it keeps open.
	Threads int
}

// StartCFloor starts cfloor over pid's threads in the procfs at root.
func StartCFloor(tb testing.TB, root string, pid int) *CFloor {
	tb.Helper()
	cmd := exec.Command(CTool(tb, "internal/testutil/cfloor/cfloor.c"), root, strconv.Itoa(pid))
	cmd.Stderr = os.Stderr
	in, out := StartWorkload(tb, cmd)
	f := &CFloor{in: in, out: out}
	line, err := out.ReadString('\n')
	if err == nil {
		f.Threads, err = strconv.Atoi(strings.TrimSpace(line))
	}
	if err != nil {
		tb.Fatalf("cfloor: %q %v", line, err)
	}
	return f
}

// Pass makes one pread pass and returns the CPU time it took.
func (f *CFloor) Pass(tb testing.TB) time.Duration {
	tb.Helper()
	d, _ := f.PassOf(tb, f.Threads)
	return d
}

// PassOf makes one pread pass over the first n files only and returns the
// CPU time it took and the CPU it ended on.
func (f *CFloor) PassOf(tb testing.TB, n int) (time.Duration, int) {
	tb.Helper()
	if _, err := io.WriteString(f.in, "pass "+strconv.Itoa(n)+"\n"); err != nil {
		tb.Fatal(err)
	}
	line, err := f.out.ReadString('\n')
	ns, cpu, _ := strings.Cut(strings.TrimSpace(line), " ")
	t, perr := strconv.ParseInt(ns, 10, 64)
	c, cerr := strconv.Atoi(cpu)
	if err != nil || perr != nil || cerr != nil {
		tb.Fatalf("cfloor pass: %q %v %v %v", line, err, perr, cerr)
	}
	return time.Duration(t), c
}

// Every has the floor make n pairs of passes on its own clock, one pair
// every period from half a period on: one over the first k files and one
// over all of them (cfloor.c). Collect returns their CPU times.
func (f *CFloor) Every(tb testing.TB, period time.Duration, n, k int) {
	tb.Helper()
	if _, err := fmt.Fprintf(f.in, "every %d %d %d\n", period.Milliseconds(), n, k); err != nil {
		tb.Fatal(err)
	}
}

// Collect waits for the n pairs of passes Every asked for and returns the
// CPU time of each pass over k files and of each over all of them.
func (f *CFloor) Collect(tb testing.TB, n int) (some, all []time.Duration) {
	tb.Helper()
	for range n {
		line, err := f.out.ReadString('\n')
		a, b, _ := strings.Cut(strings.TrimSpace(line), " ")
		x, aerr := strconv.ParseInt(a, 10, 64)
		y, berr := strconv.ParseInt(b, 10, 64)
		if err != nil || aerr != nil || berr != nil {
			tb.Fatalf("cfloor every: %q %v %v %v", line, err, aerr, berr)
		}
		some, all = append(some, time.Duration(x)), append(all, time.Duration(y))
	}
	return some, all
}

// RaiseThreadLimits raises kernel.pid_max and kernel.threads-max, if they
// are lower, so that n more threads can start, and restores them when the
// test ends. It skips the test when it cannot raise them.
func RaiseThreadLimits(tb testing.TB, n int) {
	tb.Helper()
	for _, name := range []string{"pid_max", "threads-max"} {
		path := "/proc/sys/kernel/" + name
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		old := strings.TrimSpace(string(b))
		cur, err := strconv.Atoi(old)
		if err != nil {
			tb.Fatal(err)
		}
		want := max(cur, 2*n+65536)
		if name == "pid_max" {
			want = max(cur, min(4<<20, 2*n+65536)) // PID_MAX_LIMIT
		}
		if want == cur {
			continue
		}
		if err := os.WriteFile(path, []byte(strconv.Itoa(want)), 0); err != nil {
			tb.Skipf("cannot raise %s to %d for %d threads: %v", name, want, n, err)
		}
		tb.Cleanup(func() {
			if err := os.WriteFile(path, []byte(old), 0); err != nil {
				tb.Errorf("restoring %s to %s: %v", name, old, err)
			}
		})
	}
}

// StartCWorkers runs a process named name with n threads named worker-1 ..
// worker-n, each waking every period (cworkers.c), for the rest of the
// test, and returns its PID.
func StartCWorkers(tb testing.TB, name string, n int, period time.Duration) int {
	tb.Helper()
	cmd := exec.Command(CTool(tb, "internal/testutil/cworkers/cworkers.c"), name, strconv.Itoa(n), strconv.FormatInt(period.Microseconds(), 10))
	cmd.Stderr = os.Stderr
	_, out := StartWorkload(tb, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		tb.Fatalf("cworkers %s did not start: %q %v", name, line, err)
	}
	return cmd.Process.Pid
}
