package sampler

import (
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// update refreshes t. A fresh task (Timeslices 0 and no fd) gets every file
// read; a known one gets schedstat and, if it ran, status and stat.
func (s *Sampler) update(t *task) outcome {
	fresh := t.c.StartTime == 0
	if !fresh {
		sched, err := s.readSchedstat(t)
		if err == nil {
			// Scheduled in since the last pass, or running through it:
			// either way its switch counters or state may have moved.
			if sched.Timeslices != t.c.Timeslices || sched.RunNs != t.c.RunNs {
				t.c.RunNs, t.c.WaitNs, t.c.Timeslices = sched.RunNs, sched.WaitNs, sched.Timeslices
				return s.readDetails(t, false)
			}
			t.c.RunNs, t.c.WaitNs = sched.RunNs, sched.WaitNs
			return updated
		}
		if !isGone(err) {
			return classify(err)
		}
		// The thread our fd pointed at is gone, yet its TID is listed: the
		// number was reused, or the listing was a moment stale. Start over.
		s.closeTask(t)
		pid, tid := t.pid, t.tid
		*t = task{pid: pid, tid: tid, fd: -1}
		t.c.PID, t.c.TID = pid, tid
	}
	if s.kept < s.keepBudget {
		s.taskPath(t, "schedstat")
		fd, err := openat(s.rootFD, s.path, 0)
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
	return s.readDetails(t, true)
}

func (s *Sampler) readSchedstat(t *task) (procfs.TaskSchedstat, error) {
	var n int
	var err error
	if t.fd >= 0 {
		// schedstat is one short line; the 4 KiB buffer always holds it.
		n, err = preadRaw(t.fd, s.buf)
	} else {
		s.taskPath(t, "schedstat")
		n, err = readFileAt(s.rootFD, s.path, &s.buf)
	}
	if err != nil {
		return procfs.TaskSchedstat{}, err
	}
	return procfs.ParseTaskSchedstat(s.buf[:n], "schedstat")
}

// readDetails re-reads status and stat (and comm for a new thread or a
// renamed one).
func (s *Sampler) readDetails(t *task, fresh bool) outcome {
	s.taskPath(t, "status")
	n, err := readFileAt(s.rootFD, s.path, &s.buf)
	if err != nil {
		return classify(err)
	}
	st, err := procfs.ParseTaskStatus(s.buf[:n], "status")
	if err != nil {
		return unreadable
	}
	t.c.VoluntarySwitches, t.c.InvoluntarySwitches = st.VoluntarySwitches, st.InvoluntarySwitches
	t.c.State = st.State
	if string(st.CPUsAllowed) != t.c.CPUsAllowed {
		t.c.CPUsAllowed = string(st.CPUsAllowed)
	}
	renamed := string(st.Name) != t.c.Comm

	s.taskPath(t, "stat")
	if n, err = readFileAt(s.rootFD, s.path, &s.buf); err != nil {
		return classify(err)
	}
	ts, err := procfs.ParseTaskStat(s.buf[:n], "stat")
	if err != nil {
		return unreadable
	}
	t.c.StartTime, t.c.LastCPU = ts.StartTime, ts.LastCPU
	if t.c.StartTime == 0 {
		// Started in the boot tick; keep "0 means unread" unambiguous.
		t.c.StartTime = 1
	}

	if fresh || renamed {
		s.taskPath(t, "comm")
		if n, err = readFileAt(s.rootFD, s.path, &s.buf); err != nil {
			return classify(err)
		}
		if c := procfs.ParseComm(s.buf[:n]); string(c) != t.c.Comm {
			t.c.Comm = string(c)
		}
	}
	return updated
}

// numThreads reads num_threads from the process's kept-open stat file.
func (s *Sampler) numThreads(p *proc) (int, error) {
	n, err := readAll(p.statFD, &s.buf)
	if err != nil {
		return 0, err
	}
	st, err := procfs.ParseTaskStat(s.buf[:n], "stat")
	if err != nil {
		return 0, err
	}
	return st.NumThreads, nil
}

// setProcessComm gives every thread of a process the main thread's name.
func setProcessComm(group []*task, pid int) {
	if len(group) == 0 {
		return
	}
	name := group[0].c.Comm
	for _, t := range group {
		if t.tid == pid {
			name = t.c.Comm
			break
		}
	}
	for _, t := range group {
		t.c.ProcessComm = name
	}
}

// taskPath sets s.path to "PID/task/TID/<file>\0", relative to the root fd.
func (s *Sampler) taskPath(t *task, file string) {
	p := appendInt(s.path[:0], t.pid)
	p = append(p, "/task/"...)
	p = appendInt(p, t.tid)
	p = append(p, '/')
	p = append(p, file...)
	s.path = append(p, 0)
}
