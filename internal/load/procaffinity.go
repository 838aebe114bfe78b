package load

import (
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/selfprio"
)

// pinProcess pins this whole process to cpus, as taskset -c does a Go
// program: every thread on the given CPUs. The kernel has no process-wide
// affinity, only per-thread masks that a new thread copies from the thread
// that creates it; so pinning every thread that exists also pins every
// thread the runtime starts later. A thread started while the list is
// walked is caught by walking it again until a pass finds none unpinned.
// Nothing is undone: only the workload process pins itself, and it exits
// with its run.
func pinProcess(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return selfprio.EachThread(100, func(tid int) error { return unix.SchedSetaffinity(tid, &set) })
}
