package sampler

import (
	"os"
	"runtime"
	"runtime/debug"
)

// StartGCPercent is the collector's GOGC while a live source starts: the
// kernel's BTF parsed for the task walk, or the records of every thread a
// first pass finds, are a burst of allocation from a heap of a few MB, and
// at the default of 100 the collector ran four or five times in it, some
// 10 ms of a root start's 60. Four times the live heap after each cycle
// keeps the burst to one or two, with memory still bounded by what is live.
const StartGCPercent = 400

// QuietStartGC raises GOGC for a start (New and its first pass) and
// returns what restores it. A GOGC or GOMEMLIMIT the user set is left
// alone.
//
// The start's garbage (the BTF parse, the first pass's growth) is then
// over the restored GOGC's trigger, and the cycle it owes ran during the
// next passes: a first interval's peek it ended in cost 11-14 ms of CPU
// at 10,000 threads, where one it did not end in cost 3, and with one P
// (the TUI) the cycle took 60 ms of wall time there. restore runs that cycle at once, in the start,
// which the user waits for anyway, and only when it is due: a start
// that left the heap below the trigger owes none.
func QuietStartGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(StartGCPercent)
	return func() {
		debug.SetGCPercent(old)
		if old > 0 && gcDue() {
			runtime.GC()
		}
	}
}

// gcDue is whether the heap is past the point where the collector starts
// a cycle: the pacer starts one from 70% of the way from the heap it
// found live to its goal, in practice later; 80% of the goal (60% of the
// way at GOGC 100) errs towards collecting now, when it is cheap to.
func gcDue() bool {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc >= ms.NextGC/5*4
}
