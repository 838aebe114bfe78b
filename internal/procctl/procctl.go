// Package procctl acts on other tasks from the monitor, as htop does: it
// sends signals, sets CPU affinity and renices a thread or every thread of
// a process. Each action returns one line that says what it did, or an
// error that says why it could not in words an operator can act on.
//
// The actions go to the running kernel whatever procfs root the monitor
// reads: a thread's ID names it there, not in a copied /proc tree.
package procctl

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/cpulist"
)

// Target is what an action applies to: one thread (TID > 0) or, with TID 0,
// every thread of process PID.
type Target struct {
	PID, TID int
	// Comm is the name shown in messages.
	Comm string
}

// String names the target as the messages do: "thread 4243 pp-pong (of
// 4242)" or "process 4242 pingpong".
func (t Target) String() string {
	name := ""
	if t.Comm != "" {
		name = " " + t.Comm
	}
	if t.TID > 0 {
		if t.PID > 0 && t.PID != t.TID {
			return fmt.Sprintf("thread %d%s (of %d)", t.TID, name, t.PID)
		}
		return fmt.Sprintf("thread %d%s", t.TID, name)
	}
	return fmt.Sprintf("process %d%s", t.PID, name)
}

// Signal is one signal the picker offers.
type Signal struct {
	Name string
	Num  unix.Signal
}

// Signals are the picker's choices, the default first: the ones an
// operator sends by hand, not the whole table.
var Signals = []Signal{
	{"TERM", unix.SIGTERM}, {"KILL", unix.SIGKILL}, {"INT", unix.SIGINT}, {"HUP", unix.SIGHUP},
	{"STOP", unix.SIGSTOP}, {"CONT", unix.SIGCONT}, {"USR1", unix.SIGUSR1}, {"USR2", unix.SIGUSR2},
}

// Send sends sig to the target: tgkill to a thread, kill to a process.
// Most signals act on the whole process even when sent to one thread (a
// TERM ends every thread); the thread only decides who handles it.
func Send(t Target, sig Signal) (string, error) {
	var err error
	if t.TID > 0 {
		err = unix.Tgkill(t.PID, t.TID, sig.Num)
	} else {
		err = unix.Kill(t.PID, sig.Num)
	}
	if err != nil {
		return "", explain("send SIG"+sig.Name+" to "+t.String(), err, "CAP_KILL")
	}
	return fmt.Sprintf("sent SIG%s to %s", sig.Name, t), nil
}

// ParseCPUs reads a CPU list as taskset -c takes it ("0", "0-1", "0,2"),
// sorted and without repeats.
func ParseCPUs(s string) ([]int, error) {
	cpus, err := cpulist.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not a CPU list (0, 0-1, 0,2)", strings.TrimSpace(s))
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// FormatCPUs writes cpus in the kernel's list syntax: 0-1,4.
func FormatCPUs(cpus []int) string { return cpulist.Format(cpus) }

// SetAffinity restricts the target to cpus with sched_setaffinity: the
// thread, or each thread of the process (affinity is per thread; taskset
// -a does the same). A thread that exits on the way is skipped.
func SetAffinity(t Target, cpus []int) (string, error) {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	list := FormatCPUs(cpus)
	what := "set CPU affinity " + list + " for " + t.String()
	n, err := each(t, func(tid int) error { return unix.SchedSetaffinity(tid, &set) })
	if errors.Is(err, unix.EINVAL) {
		return "", fmt.Errorf("cannot %s: none of CPUs %s is online or allowed here (EINVAL)", what, list)
	}
	if err != nil {
		return "", explain(what, err, "CAP_SYS_NICE")
	}
	if t.TID > 0 {
		return fmt.Sprintf("%s now runs on CPUs %s", t, list), nil
	}
	return fmt.Sprintf("%s: %s now run on CPUs %s", t, threads(n), list), nil
}

// Nice is the target's nice value (its main thread's for a process).
func Nice(t Target) (int, error) {
	tid := t.TID
	if tid == 0 {
		tid = t.PID
	}
	// The system call returns 20 - nice, so that no value is negative.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return 0, explain("read the nice value of "+t.String(), err, "")
	}
	return 20 - p, nil
}

// Renice moves the target's nice value by delta (htop's F7 -1, F8 +1),
// within -20..19. Nice is per thread on Linux: a process is reniced thread
// by thread, each to its main thread's value plus delta, as renice -p
// moves only the thread whose ID it is given.
func Renice(t Target, delta int) (string, error) {
	from, err := Nice(t)
	if err != nil {
		return "", err
	}
	to := min(max(from+delta, -20), 19)
	if to == from {
		return fmt.Sprintf("%s is already at nice %d", t, from), nil
	}
	what := fmt.Sprintf("set nice %d for %s", to, t)
	n, err := each(t, func(tid int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, to) })
	if err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			// Lowering nice needs the privilege even on one's own threads.
			return "", fmt.Errorf("cannot %s: not permitted (%s): lowering nice, or another user's task, needs root or CAP_SYS_NICE", what, errName(err))
		}
		return "", explain(what, err, "CAP_SYS_NICE")
	}
	if t.TID > 0 {
		return fmt.Sprintf("%s: nice %d → %d", t, from, to), nil
	}
	return fmt.Sprintf("%s: nice %d → %d (%s)", t, from, to, threads(n)), nil
}

func threads(n int) string {
	if n == 1 {
		return "1 thread"
	}
	return strconv.Itoa(n) + " threads"
}

// each runs f on the target's thread, or on every thread of its process
// listed in /proc/PID/task. Threads that exit meanwhile (ESRCH) are
// skipped; the target is gone only when no thread was left. It returns how
// many threads f changed.
func each(t Target, f func(tid int) error) (int, error) {
	if t.TID > 0 {
		if err := f(t.TID); err != nil {
			return 0, err
		}
		return 1, nil
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(t.PID) + "/task")
	if errors.Is(err, os.ErrNotExist) {
		return 0, unix.ESRCH
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		switch err := f(tid); {
		case errors.Is(err, unix.ESRCH):
		case err != nil:
			return n, err
		default:
			n++
		}
	}
	if n == 0 {
		return 0, unix.ESRCH
	}
	return n, nil
}

// explain says why what could not be done, naming the errno so that it
// can be looked up, and what would allow it.
func explain(what string, err error, capability string) error {
	switch {
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("cannot %s: it is gone (ESRCH)", what)
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES):
		need := "root"
		if capability != "" {
			need += " or " + capability
		}
		return fmt.Errorf("cannot %s: not permitted (%s): another user's task needs %s", what, errName(err), need)
	}
	return fmt.Errorf("cannot %s: %w", what, err)
}

// errName is the errno's name for the two refusals: unix.ErrnoName would
// link the whole table of names for them.
func errName(err error) string {
	if errors.Is(err, unix.EACCES) {
		return "EACCES"
	}
	return "EPERM"
}
