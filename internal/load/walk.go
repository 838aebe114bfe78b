package load

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cacheLine is the stride of a working-set walk: one touch per line is
// what makes the caches refill, and no more work than that.
const cacheLine = 64

// sideSets are a pair's two working sets of size each (--working-set),
// [0] ping's and [1] pong's, each made on its side's own thread in setup.
type sideSets struct {
	size int64
	ws   [2]*workingSet
}

func (s *sideSets) setupSide(i int) func() error {
	return func() error {
		s.ws[i] = newWorkingSet(s.size)
		return nil
	}
}

func (s *sideSets) walks() [2]*workingSet { return s.ws }

// workingSet is one side's own memory, walked once per round trip.
type workingSet struct {
	buf []byte
	// sink keeps the walk's loads from being optimised away.
	sink byte
	// hotNs is one walk's time with the lines already cached, measured on
	// the side's own thread and CPU before the run starts.
	hotNs float64
}

// newWorkingSet allocates size bytes on the calling thread (so on its
// NUMA node) and measures the hot walk; nil for size 0.
func newWorkingSet(size int64) *workingSet {
	if size <= 0 {
		return nil
	}
	w := &workingSet{buf: make([]byte, size)}
	for i := range w.buf {
		w.buf[i] = byte(i) // fault every page in before anything is timed
	}
	w.walk()
	w.hotNs = w.measure()
	return w
}

// walk reads one byte of every cache line; the only work a side does per
// round trip besides the hand-off.
func (w *workingSet) walk() {
	if w == nil {
		return
	}
	var s byte
	b := w.buf
	for i := 0; i < len(b); i += cacheLine {
		s += b[i]
	}
	w.sink += s
}

// measure times back-to-back walks, no switch in between, for at least
// 20 ms and 3 walks, and returns the mean. The thread's CPU time is the
// clock, so a preemption in between does not count as walking; reading it
// is a system call (about 0.5 µs in a VM, half a 64K walk), so it is read
// only around batches of walks lasting 100 µs or more.
func (w *workingSet) measure() float64 {
	const minTime, batchTime = 20 * time.Millisecond, 100 * time.Microsecond
	t0 := threadCPUNanos()
	w.walk()
	batch := max(1, int(batchTime.Nanoseconds()/max(threadCPUNanos()-t0, 1)))
	start := threadCPUNanos()
	n := 0
	for {
		for range batch {
			w.walk()
		}
		n += batch
		if d := threadCPUNanos() - start; n >= 3 && d >= minTime.Nanoseconds() {
			return float64(d) / float64(n)
		}
	}
}

func threadCPUNanos() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}

// monoNanos is CLOCK_MONOTONIC, which the workload process and ctxtop
// share. It is a raw system call: a monitor running a load reads it at
// every refresh (Run.Progress), and an ordinary one wakes the Go runtime's
// sysmon thread when it sleeps, which then polls every 20 µs for as long
// as the monitor stays busy, preempting it.
func monoNanos() int64 {
	var ts unix.Timespec
	unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}
