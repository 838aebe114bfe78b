package load

import (
	"os"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// Counters are one thread's kernel scheduler counters.
type Counters struct {
	Voluntary   uint64 // voluntary_ctxt_switches: the thread blocked
	Involuntary uint64 // nonvoluntary_ctxt_switches: it was preempted
	Migrations  uint64 // se.nr_migrations from sched; valid when HasMigrations
	// HasMigrations is false when the kernel has no /proc/.../sched (built
	// without CONFIG_SCHED_DEBUG) or the file lacks the field.
	HasMigrations bool
	// RunNs and WaitNs are schedstat's time on a CPU and time runnable but
	// waiting on a run queue; valid when HasSchedstat.
	RunNs, WaitNs uint64
	HasSchedstat  bool
}

// selfProc is the procfs the load generator reads its own threads, its
// process and the host's interrupts from: the one it runs with, where its
// threads are (--proc, another tree, is the monitor's).
var selfProc = procfs.Unchecked("/proc")

// ReadCounters reads the counters of thread tid of process pid under root
// (normally "/proc"): /proc/PID/task/TID/status for the switch counts,
// sched for migrations and schedstat for run and wait times.
func ReadCounters(root string, pid, tid int) (Counters, error) {
	fs := procfs.Unchecked(root)
	st, err := fs.TaskStatus(pid, tid)
	if err != nil {
		return Counters{}, err
	}
	c := Counters{Voluntary: st.VoluntarySwitches, Involuntary: st.InvoluntarySwitches}
	c.Migrations, c.HasMigrations = fs.TaskSchedMigrations(pid, tid)
	if ss, err := fs.TaskSchedstat(pid, tid); err == nil {
		c.RunNs, c.WaitNs, c.HasSchedstat = ss.RunNs, ss.WaitNs, true
	}
	return c, nil
}

// readSelfCounters reads the calling thread's own counters, which stay
// readable for as long as the thread runs.
func readSelfCounters() (Counters, error) {
	return ReadCounters("/proc", os.Getpid(), gettid())
}

// sub is the change from c0 to c; migrations stay known only if both were.
func (c Counters) sub(c0 Counters) Counters {
	return Counters{
		Voluntary:     c.Voluntary - c0.Voluntary,
		Involuntary:   c.Involuntary - c0.Involuntary,
		Migrations:    c.Migrations - c0.Migrations,
		HasMigrations: c.HasMigrations && c0.HasMigrations,
		RunNs:         c.RunNs - c0.RunNs,
		WaitNs:        c.WaitNs - c0.WaitNs,
		HasSchedstat:  c.HasSchedstat && c0.HasSchedstat,
	}
}

func (c Counters) add(d Counters) Counters {
	return Counters{
		Voluntary:     c.Voluntary + d.Voluntary,
		Involuntary:   c.Involuntary + d.Involuntary,
		Migrations:    c.Migrations + d.Migrations,
		HasMigrations: c.HasMigrations && d.HasMigrations,
		RunNs:         c.RunNs + d.RunNs,
		WaitNs:        c.WaitNs + d.WaitNs,
		HasSchedstat:  c.HasSchedstat && d.HasSchedstat,
	}
}
