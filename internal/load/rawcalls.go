package load

import (
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func gettid() int { return unix.Gettid() }

// setThreadName sets the calling thread's comm, which monitors show.
func setThreadName(name string) error {
	b := append([]byte(name), 0)
	err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
	runtime.KeepAlive(b)
	if err != nil {
		return fmt.Errorf("naming thread %s: %w", name, err)
	}
	return nil
}

// From linux/futex.h; x/sys does not export them.
const (
	opFutexWait      = 0
	opFutexWake      = 1
	futexPrivateFlag = 128
	futexWaitOp      = opFutexWait | futexPrivateFlag
	futexWakeOp      = opFutexWake | futexPrivateFlag
)

// Blocking calls: every side blocks in raw system calls (syscall.RawSyscall).
// Through syscall.Syscall the runtime knows the thread is in the kernel and
// may give its P to other goroutines, so sysmon wakes to retake a sleeping
// side's P and the waking side queues for one on its return: across two
// CPUs about 40% of a pipe round trip (32.6 vs 22.6 µs on a 2-vCPU guest).
// Raw blocking calls are safe only in a process whose collector is off and
// whose GOMAXPROCS leaves a P for everything that is not a side, as the
// workload process (runner.go), the only one that runs sides, is set up:
// elsewhere, with both sides of a pair asleep that way, a stop-the-world
// for the collector waits for a side that waits for the other, stopped
// side (a deadlock), and with GOMAXPROCS no larger than the sides' thread
// count the rest of the program never runs (measured: a 1 s run's timer
// fired after 46 s).

// futexWait sleeps while *w == val.
func futexWait(w *atomic.Uint32, val uint32) {
	syscall.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val), 0, 0, 0)
}

// futexWake wakes up to n waiters on w.
func futexWake(w *atomic.Uint32, n int) {
	syscall.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, uintptr(n), 0, 0, 0)
}

const wakeAll = math.MaxInt32

// readByte and writeByte are blocking read(2) and write(2) of one byte on
// raw fds, bypassing the netpoller that os.File would use.
func readByte(fd int, b *[1]byte) (int, error) {
	for {
		n, _, e := syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 1)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

func writeByte(fd int, b *[1]byte) error {
	for {
		_, _, e := syscall.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 1)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
