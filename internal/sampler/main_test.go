package sampler

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
)

// With CTXTOP_IDLE_THREADS=N the test binary becomes a workload: it starts N
// OS threads that block forever in read(2) on a pipe, prints "ready", and
// exits when its stdin closes. Benchmarks and tests sample it from outside.
func TestMain(m *testing.M) {
	if v := os.Getenv("CTXTOP_IDLE_THREADS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad CTXTOP_IDLE_THREADS:", v)
			os.Exit(2)
		}
		idleThreads(n)
		return
	}
	os.Exit(m.Run())
}

func idleThreads(n int) {
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
			syscall.Read(p[0], b[:])
		}()
		<-started
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// startIdleThreads runs the workload above and returns its PID.
func startIdleThreads(tb testing.TB, n int) int {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CTXTOP_IDLE_THREADS="+strconv.Itoa(n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		tb.Fatalf("idle-thread workload did not start: %q %v", line, err)
	}
	return cmd.Process.Pid
}
