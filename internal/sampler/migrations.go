package sampler

import (
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
)

// readMigrations refreshes t's se.nr_migrations from its sched file. It is
// called only for a thread that ran since the last pass (or is new): one
// that did not run cannot have been moved to another CPU and run there, so
// an idle thread costs nothing, and the rate counts a move in the interval
// in which the thread ran after it. The file (2–3 KiB, formatted by the
// kernel at each read) is opened each time rather than kept open: only the
// threads that ran pay for it. A kernel without CONFIG_SCHED_DEBUG has no
// such file, and a thread may exit between its stat and its sched: either
// way the count keeps its last value, so no rate jumps.
//
// The BPF task walk (iter.go) has it in each thread's record, at no cost.
func (s *Sampler) readMigrations(t *task) {
	if sc, err := s.readSched(t); err == nil && sc.HasMigrations {
		t.c.Counters[model.Migrations] = sc.Migrations
	}
}

// readSched reads and parses t's sched file.
func (s *Sampler) readSched(t *task) (procfs.TaskSched, error) {
	dir := s.taskPath(t, "sched")
	n, err := readFileAt(dir, s.path, &s.buf, procfs.LimitStatus)
	if err != nil {
		return procfs.TaskSched{}, err
	}
	return procfs.ParseTaskSched(s.buf[:n]), nil
}
