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

// futexWait sleeps while *w == val. It goes through syscall.Syscall6, not
// RawSyscall6, so the runtime knows the thread is in the kernel and may
// give its P to other goroutines. A raw blocking wait keeps its P: with
// both sides of a pair asleep that way, a stop-the-world for the garbage
// collector waits for a side that waits for the other, stopped side (a
// deadlock), and with GOMAXPROCS no larger than the workload's thread count
// the rest of the program never runs (measured: a 1 s run's timer fired
// after 46 s). The price, measured on a 2-vCPU guest: on one CPU nothing
// (pipe 7.98 vs 7.96 µs per round trip); across two CPUs about 40%
// (pipe 32.6 vs 22.6 µs), sysmon retaking the sleeping side's P.
func futexWait(w *atomic.Uint32, val uint32) {
	syscall.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val), 0, 0, 0)
}

// futexWake wakes up to n waiters on w. It never blocks, so the raw call
// is safe and saves the runtime's system call bookkeeping.
func futexWake(w *atomic.Uint32, n int) {
	syscall.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, uintptr(n), 0, 0, 0)
}

const wakeAll = math.MaxInt32

// sysFunc is syscall.Syscall or syscall.RawSyscall: see futexWait for when
// a raw blocking call is safe. Only the child of process mode, which runs
// nothing else and has its collector off, blocks raw.
type sysFunc func(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

// readByte and writeByte are blocking read(2) and write(2) of one byte on
// raw fds, bypassing the netpoller that os.File would use.
func readByte(sc sysFunc, fd int, b *[1]byte) (int, error) {
	for {
		n, _, e := sc(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 1)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

func writeByte(sc sysFunc, fd int, b *[1]byte) error {
	for {
		_, _, e := sc(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 1)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return e
		}
		return nil
	}
}
