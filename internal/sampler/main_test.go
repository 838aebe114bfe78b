package sampler

import (
	"bufio"
	"fmt"
	"github.com/ctxtop/ctxtop/internal/testutil"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// With CTXTOP_IDLE_THREADS=N the test binary becomes a workload: it starts N
// OS threads that block forever in read(2) on a pipe, prints "ready", and
// exits when its stdin closes. Benchmarks and tests sample it from outside.
func TestMain(m *testing.M) {
	if os.Getenv("CTXTOP_WAIT_WORKLOAD") != "" {
		waitWorkload()
		return
	}
	if v := os.Getenv("CTXTOP_SLEEPERS"); v != "" {
		n, _ := strconv.Atoi(v)
		sleepers(n)
		return
	}
	if v := os.Getenv("CTXTOP_WOKEN_WAITER"); v != "" {
		cpu, _ := strconv.Atoi(v)
		wokenWaiter(cpu)
		return
	}
	if os.Getenv("CTXTOP_SPIN_THREADS") != "" {
		spinThreads()
		return
	}
	if v := os.Getenv("CTXTOP_NICE_SPIN"); v != "" {
		n, _ := strconv.Atoi(v)
		niceSpin(n)
		return
	}
	if v := os.Getenv("CTXTOP_IDLE_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad CTXTOP_IDLE_THREADS:", v)
			os.Exit(2)
		}
		idleThreads(n, os.Getenv("CTXTOP_BUSY") != "")
		return
	}
	os.Exit(m.Run())
}

func idleThreads(n int, busy bool) {
	debug.SetMaxThreads(n + 1000)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	started := make(chan struct{})
	for i := 0; i < n; i++ {
		go func() {
			runtime.LockOSThread()
			started <- struct{}{}
			var b [1]byte
			// A blocking read on a locked thread parks that OS thread in
			// the kernel: idle, exactly like a pool thread waiting for work.
			for {
				syscall.Read(p[0], b[:])
			}
		}()
		<-started
	}
	if os.Getenv("CTXTOP_CHURN") != "" {
		// Threads born and dying all the time: a locked goroutine that
		// returns without unlocking takes its OS thread with it.
		go func() {
			for {
				done := make(chan struct{})
				go func() {
					runtime.LockOSThread()
					time.Sleep(time.Millisecond)
					close(done)
				}()
				<-done
			}
		}()
	}
	if busy {
		// One thread that wakes every millisecond, as a timer or
		// heartbeat thread in a real pool would.
		go func() {
			for {
				time.Sleep(time.Millisecond)
			}
		}()
	}
	fmt.Println("ready")
	// Each line on stdin wakes one idle thread ("poke"); EOF ends it.
	in := bufio.NewReader(os.Stdin)
	for {
		if _, err := in.ReadString('\n'); err != nil {
			os.Exit(0)
		}
		syscall.Write(p[1], []byte{1})
	}
}

type workload struct {
	pid   int
	stdin io.Writer
}

// poke wakes one of the workload's idle threads once.
func (w workload) poke(tb testing.TB) {
	if _, err := io.WriteString(w.stdin, "poke\n"); err != nil {
		tb.Fatal(err)
	}
}

// startIdleThreads runs the workload above and returns its PID.
func startIdleThreads(tb testing.TB, n int) int {
	return startWorkload(tb, n, false).pid
}

func startWorkload(tb testing.TB, n int, busy bool, env ...string) workload {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CTXTOP_IDLE_THREADS="+strconv.Itoa(n))
	cmd.Env = append(cmd.Env, env...)
	if busy {
		cmd.Env = append(cmd.Env, "CTXTOP_BUSY=1")
	}
	cmd.Stderr = os.Stderr
	stdin, out := testutil.StartWorkload(tb, cmd)
	line, err := out.ReadString('\n')
	if err != nil || line != "ready\n" {
		tb.Fatalf("idle-thread workload did not start: %q %v", line, err)
	}
	return workload{pid: cmd.Process.Pid, stdin: stdin}
}
