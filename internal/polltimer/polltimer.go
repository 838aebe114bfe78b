// Package polltimer is a timer for a monitor that must not wake itself:
// it wakes only the thread already parked in the Go runtime's network
// poller, and not the runtime's sysmon thread, which a Go timer wakes
// each time one is due.
package polltimer

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Timer calls f every period until stopped. A Go timer would cost each
// call about four switches: the runtime's sysmon thread sleeps until the
// next timer is due, so it wakes at every one, and the callback's
// goroutine is handed to another thread. A timerfd waited on through the
// runtime's network poller instead wakes only the thread already parked
// in epoll_wait, which runs f itself; it is set and read with raw system
// calls, which do not wake sysmon either. Where timerfd is missing, a Go
// timer does the job. f runs on a goroutine of the Timer's own.
type Timer struct {
	f      func()
	file   *os.File
	fd     int
	period time.Duration
	timer  *time.Timer // fallback without timerfd
}

// New returns a stopped Timer that calls f.
func New(f func()) *Timer {
	t := &Timer{f: f, fd: -1}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return t
	}
	file := os.NewFile(uintptr(fd), "timerfd")
	rc, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return t
	}
	t.file, t.fd = file, fd
	go t.wait(rc)
	return t
}

// wait runs f after each expiry until the file is closed.
func (t *Timer) wait(rc interface {
	Read(func(fd uintptr) bool) error
}) {
	var n uint64
	for {
		err := rc.Read(func(fd uintptr) bool {
			_, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&n)), 8)
			return e != unix.EAGAIN
		})
		if err != nil {
			return
		}
		t.f()
	}
}

// Start calls f every period from now on.
func (t *Timer) Start(period time.Duration) {
	t.period = period
	if t.file == nil {
		if t.timer == nil {
			t.timer = time.AfterFunc(period, t.fallback)
		} else {
			t.timer.Reset(period)
		}
		return
	}
	t.set(period)
}

func (t *Timer) fallback() {
	t.f()
}

// Again schedules the next call when the timer does not repeat by itself.
func (t *Timer) Again() {
	if t.file == nil && t.timer != nil {
		t.timer.Reset(t.period)
	}
}

// Stop cancels the calls not yet made.
func (t *Timer) Stop() {
	if t.file == nil {
		if t.timer != nil {
			t.timer.Stop()
		}
		return
	}
	t.set(0)
}

func (t *Timer) set(period time.Duration) {
	ts := unix.NsecToTimespec(int64(period))
	its := unix.ItimerSpec{Interval: ts, Value: ts}
	unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(t.fd), 0, uintptr(unsafe.Pointer(&its)), 0, 0, 0)
}

// Close stops the calls for good.
func (t *Timer) Close() {
	t.Stop()
	if t.file != nil {
		t.file.Close()
	}
}
