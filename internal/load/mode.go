// Package load runs ctxtop's own ping-pong workloads: two sides that wake
// each other in turn, so the cost of a context switch can be measured and
// watched on any machine. Switch counts always come from the kernel's
// per-thread counters, never from an assumption about the protocol.
package load

import (
	"fmt"
	"strings"
)

// Mode is a kind of workload.
type Mode string

// The workloads, from the cheapest hand-off to the dearest.
const (
	// ModeGoroutine: two goroutines over unbuffered channels; the Go
	// scheduler hands off without a kernel context switch.
	ModeGoroutine Mode = "goroutine"
	// ModeFutex: two OS threads waking each other with FUTEX_WAIT and
	// FUTEX_WAKE on a shared word, as Java's LockSupport.park/unpark does.
	ModeFutex Mode = "futex"
	// ModePipe: two OS threads over a pair of pipes (perf bench sched pipe -T).
	ModePipe Mode = "pipe"
	// ModeProcess: two processes over a pair of pipes (perf bench sched pipe).
	ModeProcess Mode = "process"
	// ModeSyscall: one thread calling getppid in a loop: a mode switch, no
	// context switch; the baseline.
	ModeSyscall Mode = "syscall"
	// ModePool: N CPU-bound threads doing fixed work items, the thread pool
	// sized past the core count.
	ModePool Mode = "pool"
	// ModePoll: N threads each sleeping one period and waking, the polling
	// service whose switch rate never drops.
	ModePoll Mode = "poll"
)

// Modes are the ping-pong workloads in the order bench shows them.
func Modes() []Mode {
	return []Mode{ModeSyscall, ModeGoroutine, ModeFutex, ModePipe, ModeProcess}
}

// AllModes are the ping-pong workloads and the thread experiments.
func AllModes() []Mode { return append(Modes(), ModePool, ModePoll) }

// threaded reports whether m runs Config.Threads independent threads
// rather than pairs.
func (m Mode) threaded() bool { return m == ModePool || m == ModePoll }

// Threaded reports whether m runs Config.Threads independent threads
// (pool, poll) rather than ping-pong pairs; such a mode takes no pinning.
func (m Mode) Threaded() bool { return m.threaded() }

// Walks reports whether m supports a working set.
func (m Mode) Walks() bool { return m == ModeFutex || m == ModePipe || m == ModeProcess }

// ParseMode accepts a mode's name.
func ParseMode(s string) (Mode, error) {
	for _, m := range AllModes() {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, 0, len(AllModes()))
	for _, m := range AllModes() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("unknown mode %q (want one of %s)", s, strings.Join(names, ", "))
}

// threadName is the comm of a workload thread, at most 15 bytes as the
// kernel keeps them.
func threadName(side string, m Mode) string {
	n := side + "-" + string(m)
	if len(n) > 15 {
		n = n[:15]
	}
	return n
}
