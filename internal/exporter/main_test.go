package exporter

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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
	if v := os.Getenv("CTXTOP_POOLS"); v != "" {
		var pools, size int
		if _, err := fmt.Sscanf(v, "%dx%d", &pools, &size); err != nil {
			fmt.Fprintln(os.Stderr, "bad CTXTOP_POOLS:", v)
			os.Exit(2)
		}
		poolWorkload(pools, size, os.Getenv("CTXTOP_BUSY") != "")
		return
	}
	os.Exit(m.Run())
}

// poolName is pool i's thread-name prefix, in letters so that collapsing
// digits keeps pools apart: "pool-ab-".
func poolName(i int) string {
	b := []byte("pool-")
	for {
		b = append(b, byte('a'+i%26))
		i /= 26
		if i == 0 {
			break
		}
	}
	return string(append(b, '-'))
}

// poolWorkload starts pools × size OS threads named pool-<letters>-<n>, each
// blocked in read(2), prints "ready", and exits when stdin closes. With busy,
// one more thread wakes every millisecond, as a timer thread would.
func poolWorkload(pools, size int, busy bool) {
	debug.SetMaxThreads(pools*size + 1000)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		os.Exit(2)
	}
	started := make(chan struct{})
	for i := range pools {
		for j := range size {
			go func() {
				runtime.LockOSThread()
				name(poolName(i) + strconv.Itoa(j))
				started <- struct{}{}
				var b [1]byte
				for {
					syscall.Read(p[0], b[:])
				}
			}()
			<-started
		}
	}
	if busy {
		go func() {
			for {
				time.Sleep(time.Millisecond)
			}
		}()
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func name(s string) {
	n := append([]byte(s), 0)
	syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&n[0])), 0, 0, 0, 0)
}

func exitWorkload() {
	var a, b [2]int
	if syscall.Pipe(a[:]) != nil || syscall.Pipe(b[:]) != nil {
		os.Exit(2)
	}
	tids := make(chan int, 2)
	done := make(chan struct{}, 2)
	var stop atomic.Bool
	side := func(thread string, in, out int, first bool) {
		// Locked and never unlocked: the OS thread exits with the goroutine.
		runtime.LockOSThread()
		name(thread)
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
