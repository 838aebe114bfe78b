package sampler

import (
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// readClock stamps each task's counters with when they were read
// (model.TaskCounters.ReadAt), for about one clock reading per process:
// reading the clock around each of 10,000 threads would add a tenth to the
// pass, and most of those threads did not run.
//
// The rule, and why every stamp is exact for its counters:
//
//   - A task whose counters moved since the last pass is stamped with a
//     reading taken just after its schedstat read: when they were read.
//   - A task whose counters did not move takes the last reading, taken in
//     this pass before its read. Its counters were the same at its read in
//     the last pass and at its read now, so they were the same at any time
//     between, and this pass started after the last one ended.
//   - A process the taskstats gate skips takes the reading taken before it
//     was asked: nothing in it ran from the earlier question, before which
//     its threads were last read, to this one.
//
// A thread's interval then ends when its counters were read, and starts at
// or before its previous read with the counters that read gave, never
// counting a moment twice or its activity over a shorter time than it
// took. The clock is read at the start of each process, after each task
// that moved, and every stampEvery tasks that did not, so an idle thread's
// stamp trails its read by at most that many reads. Stamps are rounded
// down to model.ReadAtGrain.
type readClock struct {
	// base is the pass's start, which stamps are offsets from; it carries
	// the monotonic clock, so time.Since reads only that (one vDSO call).
	base time.Time
	// stamp is the last reading, rounded down to the grain.
	stamp time.Duration
	// unread counts the tasks read since the last reading.
	unread int
}

// stampEvery bounds how many unmoved tasks share one reading: at ~1.5 µs a
// read, 256 of them take ~0.4 ms, under one grain.
const stampEvery = 256

func (c *readClock) start(base time.Time) { *c = readClock{base: base} }

// tick takes a reading.
func (c *readClock) tick() {
	c.stamp = time.Since(c.base) &^ (model.ReadAtGrain - 1)
	c.unread = 0
}

// beforeRead is called before a task's schedstat is read.
func (c *readClock) beforeRead() {
	if c.unread++; c.unread > stampEvery {
		c.tick()
	}
}

// moved takes a reading for a task whose counters were just read and had
// moved (or that was read for the first time), and returns its stamp.
func (c *readClock) moved() time.Duration {
	c.tick()
	return c.stamp
}
