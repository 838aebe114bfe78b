package load

import (
	"fmt"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ModePoll: N threads each sleeping one period and waking, the polling
// service whose switch rate never drops.
const ModePoll Mode = "poll"

func pollInfo() Info {
	return Info{
		Mode:  ModePoll,
		Title: "threads each sleeping a period and waking",
		Help: "--threads threads each sleeping --period and waking: wake-ups/s and voluntary " +
			"switches/s per thread, which match 1/period",
		Threaded: true, TakesPeriod: true,
		Unit:  Unit{One: "wake-up", Many: "wake-ups", Short: "wake"},
		count: func(s *Summary) *uint64 { return &s.Wakeups }, threadsPerUnit: 1,
		prepare: func(cfg Config) unitMaker {
			return func(p *pair) (pairImpl, error) { return &pollThread{p: p, period: cfg.Period}, nil }
		},
		headline: func(cfg Config) string {
			return fmt.Sprintf("poll, %s, each waking every %v", plural(cfg.Threads, "thread"), cfg.Period)
		},
		figures:      pollFigures,
		writeFigures: writePollFigures,
	}
}

// pollFigures are the wake-ups' rates, what the period promises (threads
// / period), and the kernel's voluntary switches per thread, which should
// match it.
func pollFigures(s *Summary, cfg Config, secs float64, d *Counters) {
	s.Threads, s.PeriodNs = cfg.Threads, float64(cfg.Period.Nanoseconds())
	if secs <= 0 {
		return
	}
	s.WakeupsPerSec = float64(s.Wakeups) / secs
	s.WakeupsPerSecPerThread = s.WakeupsPerSec / float64(cfg.Threads)
	s.ExpectedWakeupsPerSec = float64(cfg.Threads) / cfg.Period.Seconds()
	if d == nil {
		return
	}
	s.VoluntaryPerSecPerThread = float64(s.SwitchesVoluntary) / secs / float64(cfg.Threads)
}

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
