// Package selfprio raises the live monitor's scheduling priority when it
// may, as atop does when privileged. A ping-pong load wakes a thread
// 200,000 times a second; at the default nice each wake-up may preempt the
// monitor's sampling thread, which then shows up as the monitor's own
// involuntary switches (46/s measured, 6/s at nice -20). The monitor uses
// well under 1% of a CPU, so running it first costs the rest of the box
// next to nothing.
package selfprio

import (
	"errors"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Nice is the nice value the monitor asks for.
const Nice = -20

// EnvBase names the variable that carries the nice value the monitor had
// before it raised its own, so the workload processes it re-executes run
// at the priority it was started with, not at its raised one.
const EnvBase = "CTXTOP_BASE_NICE"

// Raise sets every thread of this process to Nice. Without the privilege
// (root, CAP_SYS_NICE or a high enough RLIMIT_NICE) it changes nothing and
// reports false; that is not an error. Threads started later inherit the
// raised value from the thread that starts them.
func Raise() bool {
	// The kernel's getpriority returns 20 - nice, so that it is never
	// negative.
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return false
	}
	base := 20 - prio
	if base <= Nice {
		return true
	}
	if !setAll(Nice) {
		setAll(base)
		return false
	}
	os.Setenv(EnvBase, strconv.Itoa(base))
	return true
}

// Restore puts every thread of this process back to the nice value in
// EnvBase, if the parent set it: a workload process calls it first.
func Restore() {
	v, ok := os.LookupEnv(EnvBase)
	if !ok {
		return
	}
	os.Unsetenv(EnvBase)
	if n, err := strconv.Atoi(v); err == nil && n >= Nice && n <= 19 {
		setAll(n)
	}
}

// setAll sets every thread to nice n. A thread inherits its nice value
// when its clone begins but is listed only when the clone ends, so one the
// runtime started from a thread just before the walk set that thread can
// appear after the walk's last listing at the old value: one Raise in
// 500 left a thread at nice 0 here. So the walk is made again until every
// thread listed is at n twice, a millisecond apart, long enough for a
// clone under way to end (one in 4,500 still missed with no wait), a few
// times at most. A thread the runtime starts after that inherits n, or
// not: none is worth failing for.
func setAll(n int) bool {
	set := func(tid int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, n) }
	for range 4 {
		err := EachThread(5, set)
		if err != nil && !errors.Is(err, ErrThreadsKeptAppearing) {
			return false
		}
		if allAt(n) {
			time.Sleep(time.Millisecond)
			if allAt(n) {
				break
			}
		}
	}
	return true
}

// allAt reports whether every thread listed now runs at nice n.
func allAt(n int) bool {
	tids, err := threads()
	if err != nil {
		return false
	}
	for _, tid := range tids {
		// The kernel's getpriority returns 20 - nice.
		if prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil && 20-prio != n {
			return false
		}
	}
	return true
}

// ErrThreadsKeptAppearing means every pass of EachThread found a thread
// it had not seen.
var ErrThreadsKeptAppearing = errors.New("threads kept appearing")

// EachThread calls f once for every thread of this process, listing the
// threads again until a pass finds none it had not seen (the runtime may
// start one meanwhile), at most passes times. A thread that exited first
// (ESRCH) is skipped; any other error from f stops the walk.
func EachThread(passes int, f func(tid int) error) error {
	seen := map[int]bool{}
	for range passes {
		tids, err := threads()
		if err != nil {
			return err
		}
		fresh := false
		for _, tid := range tids {
			if seen[tid] {
				continue
			}
			seen[tid], fresh = true, true
			if err := f(tid); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
		}
		if !fresh {
			return nil
		}
	}
	return ErrThreadsKeptAppearing
}

// threads lists this process's threads.
func threads() ([]int, error) {
	f, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(names))
	for _, s := range names {
		if tid, err := strconv.Atoi(s); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
