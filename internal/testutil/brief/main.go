// Command brief is a test workload whose threads exit on demand: two OS
// threads, brief-a and brief-b, each wake every millisecond. It prints
// "PID TIDA TIDB" once both run; a line on stdin ends brief-a's thread
// while the process lives on, and the end of stdin ends the process.
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// The main goroutine keeps the main thread, so neither worker can be
// scheduled onto it and rename the process.
func init() { runtime.LockOSThread() }

func name(s string) {
	b := append([]byte(s), 0)
	syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0, 0)
}

// tick names its thread n and sleeps a millisecond at a time until stop
// closes. It returns still locked to the thread, so the runtime ends the
// thread with it: that is the exit the monitor must notice.
func tick(n string, tids chan<- int, stop <-chan struct{}) {
	runtime.LockOSThread()
	name(n)
	tids <- syscall.Gettid()
	for {
		select {
		case <-stop:
			return
		default:
		}
		// A raw nanosleep: the thread itself sleeps, each one a
		// voluntary switch, and no other thread takes its timer.
		ts := syscall.Timespec{Nsec: int64(time.Millisecond)}
		syscall.Nanosleep(&ts, nil)
	}
}

func main() {
	a, b := make(chan int, 1), make(chan int, 1)
	stopA := make(chan struct{})
	go tick("brief-a", a, stopA)
	go tick("brief-b", b, nil)
	fmt.Println(os.Getpid(), <-a, <-b)
	in := bufio.NewScanner(os.Stdin)
	if in.Scan() {
		close(stopA)
	}
	for in.Scan() {
	}
}
