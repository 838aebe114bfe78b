// Command pingpong is a test workload: two OS threads, named pp-ping and
// pp-pong, bounce a byte over a pair of pipes as fast as they can. It prints
// "PID TID TID" once both run, and exits when its stdin closes.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// The main goroutine keeps the main thread, so neither side can be scheduled
// onto it and rename the process.
func init() { runtime.LockOSThread() }

func name(s string) {
	b := append([]byte(s), 0)
	syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0, 0)
}

func side(n string, in, out int, first bool, tids chan<- int) {
	runtime.LockOSThread()
	name(n)
	tids <- syscall.Gettid()
	b := []byte{0}
	if first {
		syscall.Write(out, b)
	}
	for {
		// Blocking reads on plain pipe fds: the thread sleeps in the
		// kernel, so each hand-off is a real context switch.
		if n, err := syscall.Read(in, b); n != 1 || err != nil {
			os.Exit(1)
		}
		syscall.Write(out, b)
	}
}

func main() {
	var a, b [2]int
	if err := syscall.Pipe(a[:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := syscall.Pipe(b[:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tids := make(chan int, 2)
	go side("pp-ping", b[0], a[1], true, tids)
	go side("pp-pong", a[0], b[1], false, tids)
	fmt.Println(os.Getpid(), <-tids, <-tids)
	_, _ = io.Copy(io.Discard, os.Stdin)
}
