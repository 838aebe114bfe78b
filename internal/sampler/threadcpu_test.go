package sampler

import (
	"runtime"
	"testing"
	"time"
)

// TestThreadCPUCountsWhatRan: the pass's own CPU time (passCost.own) counts
// a spin of the thread however recently the scheduler last folded in its
// run time, as the process's CPU time (cpuTime) does. getrusage
// (RUSAGE_THREAD) did not: a 1.5 ms spin read 0 in 40% of tries (HZ=250),
// so a pass seemed to leave ms of the process's CPU to other threads.
func TestThreadCPUCountsWhatRan(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const spin = 1500 * time.Microsecond
	off := 0
	var own, proc []time.Duration
	for range 30 {
		o0, p0, w0 := threadCPU(), cpuTime(), time.Now()
		for time.Since(w0) < spin {
		}
		o, p := threadCPU()-o0, cpuTime()-p0
		own, proc = append(own, o), append(proc, p)
		// The process's other threads (the runtime's) may run meanwhile,
		// a little; the thread's clock may not lose a spin.
		if o > p+100*time.Microsecond || o < p-500*time.Microsecond {
			off++
		}
		time.Sleep(3 * time.Millisecond)
	}
	if off > 3 {
		t.Errorf("%d of 30 spins of %v: the thread's CPU time %v, the process's %v", off, spin, own, proc)
	}
}
