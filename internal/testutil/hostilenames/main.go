// Command hostilenames is a test workload whose threads carry names an
// attacker could choose with prctl(PR_SET_NAME): escape sequences, control
// characters, bytes that are not UTF-8, bidi overrides, CJK. Each named
// thread wakes every few milliseconds so it has switches to show. It prints
// "PID TID..." (in the order of Names) once all run, and exits when its
// stdin closes.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// The main goroutine keeps the main thread, so the process name stays the
// one set below and no named thread can be scheduled onto it.
func init() { runtime.LockOSThread() }

func name(s string) {
	b := append([]byte(s), 0)
	syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0, 0)
}

func main() {
	name(testutil.HostileProcessName)
	type started struct{ i, tid int }
	ch := make(chan started)
	for i, n := range testutil.HostileNames {
		go func() {
			runtime.LockOSThread()
			name(n)
			ch <- started{i, syscall.Gettid()}
			for {
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	out := make([]string, 1+len(testutil.HostileNames))
	out[0] = fmt.Sprint(os.Getpid())
	for range testutil.HostileNames {
		s := <-ch
		out[1+s.i] = fmt.Sprint(s.tid)
	}
	fmt.Println(strings.Join(out, " "))
	_, _ = io.Copy(io.Discard, os.Stdin)
}
