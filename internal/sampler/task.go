package sampler

import (
	"slices"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// update refreshes t. A fresh task (Timeslices 0 and no fd) gets a first
// read (readFirst); a known one gets schedstat and, if it ran, status, stat
// and sched.
func (s *Sampler) update(t *task) outcome {
	fresh := t.c.StartTime == 0
	if !fresh {
		s.clock.beforeRead()
		sched, err := s.readSchedstat(t)
		if err == nil {
			moved := sched.WaitNs != t.c.WaitNs
			// Scheduled in since the last pass, or running through it:
			// either way its switch counters or state may have moved. A
			// thread only queued for a CPU since gets a row too (its wait
			// moved), so it needs status read once by then.
			if sched.Timeslices != t.c.Timeslices || sched.RunNs != t.c.RunNs || moved && !t.status {
				t.touched = s.procPass
				t.c.RunNs, t.c.WaitNs, t.c.Timeslices = sched.RunNs, sched.WaitNs, sched.Timeslices
				t.c.ReadAt = s.clock.moved()
				return s.readDetails(t)
			}
			t.c.RunNs, t.c.WaitNs = sched.RunNs, sched.WaitNs
			if moved {
				t.touched = s.procPass
				t.c.ReadAt = s.clock.moved()
			} else {
				t.c.ReadAt = s.clock.stamp
			}
			return updated
		}
		if !isGone(err) {
			return classify(err)
		}
		// The thread our fd pointed at is gone, yet its TID is listed: the
		// number was reused, or the listing was a moment stale. Start over.
		s.closeTask(t)
		pid, tid := t.pid, t.tid
		*t = task{pid: pid, tid: tid, fd: -1, touched: s.procPass}
		t.c.PID, t.c.TID = pid, tid
		s.fresh++
	}
	if s.kept < s.keepBudget {
		dir := s.taskPath(t, "schedstat")
		fd, err := openFile(dir, s.path)
		switch {
		case err == nil:
			t.fd = fd
			s.kept++
		case err == unix.EMFILE || err == unix.ENFILE:
			s.keepBudget = s.kept // stop keeping; open/read/close from now on
		default:
			return classify(err)
		}
	}
	sched, err := s.readSchedstat(t)
	if err != nil {
		return classify(err)
	}
	t.c.RunNs, t.c.WaitNs, t.c.Timeslices = sched.RunNs, sched.WaitNs, sched.Timeslices
	t.c.ReadAt = s.clock.moved()
	return s.readFirst(t)
}

func (s *Sampler) readSchedstat(t *task) (procfs.TaskSchedstat, error) {
	var n int
	var err error
	if t.fd >= 0 {
		// schedstat is one short line; the buffer, never under 4 KiB,
		// always holds it.
		n, err = readAll(t.fd, &s.buf, procfs.LimitLine)
	} else {
		dir := s.taskPath(t, "schedstat")
		n, err = readFileAt(dir, s.path, &s.buf, procfs.LimitLine)
	}
	if err != nil {
		return procfs.TaskSchedstat{}, err
	}
	return procfs.ParseTaskSchedstat(s.buf[:n], "schedstat")
}

// readFirst reads a thread found this pass: stat, and sched for its switch
// counts and migrations, the baselines of its first rates. status, whose
// formatting costs as much as opening a file, is left until the thread
// first runs: its counts are the very ones sched prints (the task's nvcsw
// and nivcsw), its state is stat's, and its affinity list shows only in a
// thread's row, which a thread has once it ran (or queued for a CPU), and
// then readDetails reads status before the row is made. At 10,000 new
// threads that is 10,000 files fewer at start. Without a sched file
// (CONFIG_SCHED_DEBUG off) status serves as before.
func (s *Sampler) readFirst(t *task) outcome {
	state, out := s.readStat(t)
	if out != updated {
		return out
	}
	if sc, err := s.readSched(t); err == nil && sc.HasSwitches {
		t.c.VoluntarySwitches, t.c.InvoluntarySwitches = sc.VoluntarySwitches, sc.InvoluntarySwitches
		t.c.State = stateLetter(state)
		if sc.HasMigrations {
			t.c.Counters[model.Migrations] = sc.Migrations
		}
		return updated
	}
	return s.readStatus(t)
}

// readDetails re-reads status, stat and sched for a thread that ran.
func (s *Sampler) readDetails(t *task) outcome {
	if out := s.readStatus(t); out != updated {
		return out
	}
	if _, out := s.readStat(t); out != updated {
		return out
	}
	s.readMigrations(t)
	return updated
}

// readStatus reads the switch counts, state and affinity list from status.
func (s *Sampler) readStatus(t *task) outcome {
	dir := s.taskPath(t, "status")
	n, err := readFileAt(dir, s.path, &s.buf, procfs.LimitStatus)
	if err != nil {
		return classify(err)
	}
	st, err := procfs.ParseTaskStatus(s.buf[:n], "status")
	if err != nil {
		return unreadable
	}
	t.c.VoluntarySwitches, t.c.InvoluntarySwitches = st.VoluntarySwitches, st.InvoluntarySwitches
	t.c.State = stateLetter(st.State)
	if string(st.CPUsAllowed) != t.cpusAllowed {
		t.cpusAllowed = string(st.CPUsAllowed)
		t.c.CPUsAllowed = sanitize.Name(t.cpusAllowed)
	}
	t.status = true
	return updated
}

// readStat reads the start time, last CPU and name from stat, and returns
// its raw state letter.
func (s *Sampler) readStat(t *task) (state byte, _ outcome) {
	dir := s.taskPath(t, "stat")
	n, err := readFileAt(dir, s.path, &s.buf, procfs.LimitLine)
	if err != nil {
		return 0, classify(err)
	}
	ts, err := procfs.ParseTaskStat(s.buf[:n], "stat")
	if err != nil {
		return 0, unreadable
	}
	t.c.StartTime, t.c.LastCPU = ts.StartTime, ts.LastCPU
	t.kernel = ts.Flags&procfs.KernelThread != 0
	if t.c.StartTime == 0 {
		// Started in the boot tick; keep "0 means unread" unambiguous.
		t.c.StartTime = 1
	}
	// stat holds the name raw, as comm does (status escapes it). It enters
	// the model here, once: every view prints t.c.Comm as it is, so it must
	// hold nothing a terminal acts on; comparing raw bytes cleans a rename
	// once, not every pass.
	if c := procfs.CutComm(ts.Comm); string(c) != t.comm {
		t.comm = string(c)
		t.c.Comm = sanitize.Name(t.comm)
	}
	return ts.State, updated
}

// stateLetter keeps the one-letter state of a status file printable: a
// --proc tree could hold an escape byte there.
func stateLetter(b byte) byte {
	if b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' {
		return b
	}
	return sanitize.Substitute
}

// numThreads reads num_threads from the main thread's kept-open stat file.
func (s *Sampler) numThreads(p *proc) (int, error) {
	n, err := readAll(p.statFD, &s.buf, procfs.LimitLine)
	if err != nil {
		return 0, err
	}
	st, err := procfs.ParseTaskStat(s.buf[:n], "stat")
	if err != nil {
		return 0, err
	}
	return st.NumThreads, nil
}

// setProcessComm gives every thread of a process the main thread's name,
// marking the threads whose name it changed touched in pass.
func setProcessComm(group []*task, pid int, pass uint64) {
	if len(group) == 0 {
		return
	}
	giveComm(group, processComm(group, pid), pass)
}

// processComm is the name of the main thread of a process's threads,
// sorted by TID (the first one's when it is not among them).
func processComm(group []*task, pid int) string {
	if group[0].tid == pid {
		return group[0].c.Comm // the usual case: the lowest TID
	}
	if i, ok := slices.BinarySearchFunc(group, pid, func(t *task, tid int) int { return t.tid - tid }); ok {
		return group[i].c.Comm
	}
	return group[0].c.Comm
}

// giveComm gives every thread in group the process name name.
func giveComm(group []*task, name string, pass uint64) {
	for _, t := range group {
		if t.c.ProcessComm != name {
			t.c.ProcessComm, t.touched = name, pass
		}
	}
}

// taskPath sets s.path to t's file and returns the directory fd it is
// relative to: "TID/<file>\0" from the process's task directory, opened
// once for the process (taskDir), or "PID/task/TID/<file>\0" from the root
// when that directory could not be opened.
func (s *Sampler) taskPath(t *task, file string) (dirfd int) {
	if s.taskDirPID != t.pid {
		s.closeTaskDir()
		s.taskDirPID = t.pid
		s.path = append(appendInt(s.path[:0], t.pid), "/task\x00"...)
		if fd, err := openDir(s.rootFD, s.path); err == nil {
			s.taskDirFD = fd
		}
	}
	if s.taskDirFD < 0 {
		s.path = appendTaskPath(s.path[:0], t.pid, t.tid, file)
		return s.rootFD
	}
	s.path = append(append(appendInt(s.path[:0], t.tid), '/'), file...)
	s.path = append(s.path, 0)
	return s.taskDirFD
}

// closeTaskDir closes the task directory taskPath opened. A pass closes it
// when it is done: by the next, the PID may name another process.
func (s *Sampler) closeTaskDir() {
	if s.taskDirFD >= 0 {
		closeFD(s.taskDirFD)
	}
	s.taskDirFD, s.taskDirPID = -1, 0
}

// appendTaskPath appends "PID/task/TID/<file>\0" to b.
func appendTaskPath(b []byte, pid, tid int, file string) []byte {
	b = appendInt(b, pid)
	b = append(b, "/task/"...)
	b = appendInt(b, tid)
	b = append(b, '/')
	b = append(b, file...)
	return append(b, 0)
}
