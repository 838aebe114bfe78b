package cli

import (
	"os"
	"runtime/debug"
)

// startupGCPercent is the collector's GOGC while a live source starts: the
// kernel's BTF parsed for the task walk, or the records of every thread a
// first pass finds, are a burst of allocation from a heap of a few MB, and
// at the default of 100 the collector ran four or five times in it, some
// 10 ms of a root start's 60. Four times the live heap after each cycle
// keeps the burst to one or two, with memory still bounded by what is live.
const startupGCPercent = 400

// quietStartGC raises GOGC for the start and returns what restores it. A
// GOGC or GOMEMLIMIT the user set is left alone.
func quietStartGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(startupGCPercent)
	return func() { debug.SetGCPercent(old) }
}
