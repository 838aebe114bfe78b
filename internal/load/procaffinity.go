package load

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinnedProcess is a whole-process pinning, as taskset -c on a Go program
// makes: every thread of this process on the given CPUs. The kernel has no
// process-wide affinity, only per-thread masks that a new thread copies
// from the thread that creates it; so pinning every thread that exists
// also pins every thread the runtime starts later.
type pinnedProcess struct {
	prev map[int]unix.CPUSet // each pinned thread's mask before
	orig unix.CPUSet         // the caller's mask before, for threads born pinned
}

// pinProcess sets the affinity of every thread of this process to cpus. A
// thread started while the list is walked is caught by walking it again
// until a pass finds none unpinned.
func pinProcess(cpus []int) (*pinnedProcess, error) {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	p := &pinnedProcess{prev: map[int]unix.CPUSet{}}
	if err := unix.SchedGetaffinity(0, &p.orig); err != nil {
		return nil, err
	}
	for range 100 {
		tids, err := ownThreads()
		if err != nil {
			p.restore()
			return nil, err
		}
		changed := false
		for _, tid := range tids {
			if _, done := p.prev[tid]; done {
				continue
			}
			var old unix.CPUSet
			if err := unix.SchedGetaffinity(tid, &old); err != nil {
				continue // the thread exited
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue
				}
				p.restore()
				return nil, err
			}
			p.prev[tid] = old
			changed = true
		}
		if !changed {
			return p, nil
		}
	}
	p.restore()
	return nil, errors.New("pinning the process: threads kept appearing")
}

// restore gives every thread its mask from before: its own if it was
// pinned, else (born pinned during the run) the caller's.
func (p *pinnedProcess) restore() {
	if p == nil {
		return
	}
	tids, _ := ownThreads()
	for _, tid := range tids {
		m, ok := p.prev[tid]
		if !ok {
			m = p.orig
		}
		unix.SchedSetaffinity(tid, &m) // a thread that exited needs nothing
	}
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
