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

// futexWait sleeps while *w == val. sc is syscall.Syscall6 unless the
// workload runs in its own process set up for raw blocking calls (see
// blocking). Through syscall.Syscall6 the runtime knows the thread is in
// the kernel and may give its P to other goroutines; a raw blocking wait
// keeps its P: with both sides of a pair asleep that way, a stop-the-world
// for the garbage collector waits for a side that waits for the other,
// stopped side (a deadlock), and with GOMAXPROCS no larger than the
// workload's thread count the rest of the program never runs (measured: a
// 1 s run's timer fired after 46 s). The price of the safe call, measured
// on a 2-vCPU guest: on one CPU nothing (pipe 7.98 vs 7.96 µs per round
// trip); across two CPUs about 40% (pipe 32.6 vs 22.6 µs), sysmon retaking
// the sleeping side's P.
func futexWait(sc sysFunc6, w *atomic.Uint32, val uint32) {
	sc(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWaitOp, uintptr(val), 0, 0, 0)
}

// futexWake wakes up to n waiters on w. It never blocks, so the raw call
// is safe and saves the runtime's system call bookkeeping.
func futexWake(w *atomic.Uint32, n int) {
	syscall.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(w)), futexWakeOp, uintptr(n), 0, 0, 0)
}

const wakeAll = math.MaxInt32

// sysFunc is syscall.Syscall or syscall.RawSyscall: see futexWait for when
// a raw blocking call is safe.
type sysFunc func(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

type sysFunc6 func(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err syscall.Errno)

// blocking are the calls a side blocks in. Raw ones are safe only in a
// process whose collector is off and whose GOMAXPROCS leaves a P for
// everything that is not a side, which the workload process (runner.go)
// sets up: there they keep sysmon from retaking the sleeping side's P and
// the waking side from queueing for one on its return.
func blocking(raw bool) (sysFunc, sysFunc6) {
	if raw {
		return syscall.RawSyscall, syscall.RawSyscall6
	}
	return syscall.Syscall, syscall.Syscall6
}

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
