package load

import (
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// From linux/futex.h: wait with an absolute CLOCK_MONOTONIC deadline.
const (
	opFutexWaitBitset = 9
	futexBitsetAny    = 0xffffffff
)

// pollThread sleeps one period and wakes, over and over: a service that
// polls instead of waiting for work. Each wake-up is one voluntary switch
// away (the sleep) and back. It sleeps in a futex wait with a deadline
// rather than nanosleep so that Stop can wake it at once.
type pollThread struct {
	p      *pair
	period time.Duration
	word   atomic.Uint32 // 1 once stopped
}

func (pt *pollThread) sides() []sideSpec {
	return []sideSpec{{name: "poll-sleeper", cpu: -1, body: pt.loop}}
}

func (pt *pollThread) loop() {
	period := pt.period.Nanoseconds()
	next := monoNanos()
	for !pt.p.stop.Load() {
		next += period
		if now := monoNanos(); next < now-period {
			// Far behind (the machine was stopped, say): wake on the
			// period from now rather than in a burst.
			next = now
		}
		ts := unix.NsecToTimespec(next)
		// Raw (see futexWait): the thread sleeps holding its P, so no
		// runtime thread wakes to retake it.
		syscall.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&pt.word)), opFutexWaitBitset|futexPrivateFlag,
			0, uintptr(unsafe.Pointer(&ts)), 0, futexBitsetAny)
		if pt.p.stop.Load() {
			return
		}
		pt.p.count.Add(1)
	}
}

func (pt *pollThread) wake() {
	pt.word.Store(1)
	futexWake(&pt.word, wakeAll)
}

func (pt *pollThread) force() { pt.wake() }
func (pt *pollThread) close() {}
