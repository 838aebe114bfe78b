package exporter

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"
)

// With CTXTOP_EXIT_WORKLOAD set the test binary becomes a workload: two
// threads named busy-1 and busy-2 bounce a byte over pipes as fast as they
// can; it prints "PID TID TID", and on a line on stdin both threads exit and
// it prints "stopped". It ends when stdin closes.
// The workload's main goroutine keeps the main thread, so neither side runs
// on it: the runtime never ends the main thread, so that side could not exit.
func init() {
	if os.Getenv("CTXTOP_EXIT_WORKLOAD") != "" {
		runtime.LockOSThread()
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("CTXTOP_EXIT_WORKLOAD") != "" {
		exitWorkload()
		return
	}
	os.Exit(m.Run())
}

func exitWorkload() {
	var a, b [2]int
	if syscall.Pipe(a[:]) != nil || syscall.Pipe(b[:]) != nil {
		os.Exit(2)
	}
	tids := make(chan int, 2)
	done := make(chan struct{}, 2)
	var stop atomic.Bool
	side := func(name string, in, out int, first bool) {
		// Locked and never unlocked: the OS thread exits with the goroutine.
		runtime.LockOSThread()
		n := append([]byte(name), 0)
		syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&n[0])), 0, 0, 0, 0)
		tids <- syscall.Gettid()
		buf := []byte{0}
		if first {
			syscall.Write(out, buf)
		}
		for {
			if n, err := syscall.Read(in, buf); n != 1 || err != nil {
				os.Exit(1)
			}
			if buf[0] == 1 || stop.Load() && first {
				// Pass the stop on so the other side ends too.
				syscall.Write(out, []byte{1})
				done <- struct{}{}
				return
			}
			syscall.Write(out, buf)
		}
	}
	go side("busy-1", b[0], a[1], true)
	go side("busy-2", a[0], b[1], false)
	fmt.Println(os.Getpid(), <-tids, <-tids)
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		os.Exit(0)
	}
	stop.Store(true)
	<-done
	<-done
	fmt.Println("stopped")
	_, _ = in.ReadString('\n')
}
