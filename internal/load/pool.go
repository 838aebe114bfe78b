package load

import (
	"runtime"
	"time"
)

// poolThread is one thread of a CPU-bound pool: it does fixed work items,
// never blocking, so the kernel switches it only to share the CPUs
// (involuntary switches) once there are more threads than CPUs.
type poolThread struct {
	p     *pair
	iters uint64 // spin iterations in one work item
	sink  uint64
}

func (pt *poolThread) sides() []sideSpec {
	return []sideSpec{{name: "pool-worker", cpu: -1, body: pt.loop}}
}

// spinChunk bounds how long a thread goes without looking at the stop
// flag, so Stop stays prompt for long work items.
const spinChunk = 1 << 14

func (pt *poolThread) loop() {
	x := pt.sink | 1
	for !pt.p.stop.Load() {
		for left := pt.iters; left > 0; {
			k := min(left, spinChunk)
			x = spin(k, x)
			left -= k
			if pt.p.stop.Load() {
				pt.sink = x
				return
			}
		}
		pt.p.count.Add(1)
	}
	pt.sink = x
}

// spin is the work: xorshift steps, which no compiler folds and which
// stay in registers, so a thread's speed depends on CPU time alone.
func spin(n, x uint64) uint64 {
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// calibrateSpin is how many spin iterations take work of this thread's
// CPU time, measured over at least 20 ms of CPU time.
func calibrateSpin(work time.Duration) uint64 {
	// The clock is this thread's: the goroutine must not move to another.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const minTime = 20 * time.Millisecond
	var n uint64
	x := uint64(1)
	t0 := threadCPUNanos()
	for {
		x = spin(1<<16, x)
		n += 1 << 16
		if x == 0 {
			n++ // never: xorshift never reaches 0; keeps x alive
		}
		if d := threadCPUNanos() - t0; d >= minTime.Nanoseconds() {
			return max(uint64(float64(n)/float64(d)*float64(work.Nanoseconds())), 1)
		}
	}
}

func (pt *poolThread) wake()  {}
func (pt *poolThread) force() {}
func (pt *poolThread) close() {}
