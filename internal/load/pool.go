package load

import (
	"fmt"
	"runtime"
	"time"
)

// ModePool: N CPU-bound threads doing fixed work items, the thread pool
// sized past the core count.
const ModePool Mode = "pool"

func poolInfo() Info {
	return Info{
		Mode:  ModePool,
		Title: "CPU-bound threads doing fixed work items",
		Help: "--threads CPU-bound threads doing fixed --work items: items/s, involuntary " +
			"switches/s and run-queue wait as the pool outgrows the CPUs; --cpu-quota runs it " +
			"in a cgroup with that CPU limit (root), as a container's limit, and gives the " +
			"throttled share",
		Threaded: true, TakesWork: true, TakesCPUQuota: true, Bench: true,
		Unit:  Unit{One: "item", Many: "items", Short: "item"},
		count: func(s *Summary) *uint64 { return &s.Items }, threadsPerUnit: 1,
		prepare: func(cfg Config) unitMaker {
			// Once per run, before any thread spins.
			iters := calibrateSpin(cfg.Work)
			return func(p *pair) (pairImpl, error) { return &poolThread{p: p, iters: iters}, nil }
		},
		headline: func(cfg Config) string {
			return fmt.Sprintf("pool, %s, %v work items%s", plural(cfg.Threads, "thread"), cfg.Work, quotaText(cfg.CPUQuota))
		},
		figures:      poolFigures,
		writeFigures: writePoolFigures,
	}
}

// poolFigures are the pool's rates: items, involuntary switches, and the
// share of the threads' time spent runnable but waiting for a CPU.
func poolFigures(s *Summary, cfg Config, secs float64, d *Counters) {
	s.Threads, s.WorkNs = cfg.Threads, float64(cfg.Work.Nanoseconds())
	if secs <= 0 {
		return
	}
	s.ItemsPerSec = float64(s.Items) / secs
	if d == nil {
		return
	}
	s.InvoluntaryPerSec = float64(s.SwitchesInvoluntary) / secs
	if d.HasSchedstat && d.RunNs+d.WaitNs > 0 {
		v := float64(d.WaitNs) / float64(d.RunNs+d.WaitNs)
		s.RunQueueWaitShare = &v
		s.CPUS = float64(d.RunNs) / 1e9
	}
}

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
