package load

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
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
	pinned := map[int]bool{}
	for range 100 {
		tids, err := ownThreads()
		if err != nil {
			return err
		}
		changed := false
		for _, tid := range tids {
			if pinned[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // the thread exited
				}
				return err
			}
			pinned[tid] = true
			changed = true
		}
		if !changed {
			return nil
		}
	}
	return errors.New("pinning the process: threads kept appearing")
}

// ownThreads lists this process's threads.
func ownThreads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
