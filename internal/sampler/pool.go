package sampler

import "github.com/ctxtop/ctxtop/internal/model"

// task is the sampler's memory of one thread between passes.
type task struct {
	pid, tid int
	// touched is the /proc pass that last changed c (but for ReadAt).
	touched uint64
	// fd is the kept-open schedstat file, or -1 when the fd budget ran out
	// and the file is opened afresh each pass.
	fd int
	c  model.TaskCounters
	// comm is the raw name in stat, cpusAllowed the raw Cpus_allowed_list
	// of status: c.Comm and c.CPUsAllowed are sanitized and may differ from
	// them. Comparing raw bytes keeps a change cleaned once, not every pass.
	comm, cpusAllowed string
	// status is set once status was read: a new thread's first read takes
	// its counts from sched instead (readFirst).
	status bool
	// kernel is set when stat's flags said it is a kernel thread.
	kernel bool
}

// proc is the sampler's memory of one process.
type proc struct {
	pid int
	// statFD is the main thread's kept-open /proc/PID/task/PID/stat, whose
	// num_threads tells whether the task directory needs listing again and
	// whose state whether a target process is a zombie; -1 when not kept.
	// Not /proc/PID/stat: that one sums fault counts and CPU times over
	// every thread, a walk of 10,000 threads in the kernel on each read
	// (~3 ms, a fifth of an unprivileged pass), for the same two fields.
	statFD int
	// threads is how many threads were read last pass.
	threads int
	// kernel is set when that one thread was a kernel thread, which never
	// starts another: its num_threads need not be read.
	kernel bool
	// mustList forces a directory listing: one of the threads vanished or
	// could not be read, so the set may have changed even if the count did not.
	mustList bool
	// gate is the process's taskstats activity at the last query.
	gate      activity
	gateValid bool
	// A process that ran at every recent query is not asked again for a
	// while: the query walks all its threads in the kernel and would only
	// add to the cost of reading them. gateMisses counts consecutive
	// queries that found activity, gateWait the passes left before the next.
	gateMisses, gateWait uint8
	// cgroup is the process's cgroup path (procfs.ParseProcCgroupPath) made
	// safe to print, as every sink shows it; cgroupRaw is the path as the
	// kernel names it, to find the group's directory. v1 is whether it is
	// in the v1 cpu hierarchy; cgroupAge counts the passes that read the
	// process until /proc/PID/cgroup is read again.
	cgroup    string
	cgroupRaw string
	cgroupV1  bool
	cgroupAge uint8
	// shownComm and shownCgroup are the name and cgroup the task walk's
	// last export gave the process's threads (exportWalked).
	shownComm, shownCgroup string
	// givenComm and givenCgroup are the name and cgroup the /proc path's
	// last pass gave every thread of the process (sampleProcess).
	givenComm, givenCgroup string
}

// Records are recycled through free lists, so a steady state allocates
// nothing however many threads come and go.

func (s *Sampler) allocProc(pid int) *proc {
	var p *proc
	if n := len(s.freeProcs); n > 0 {
		p, s.freeProcs = s.freeProcs[n-1], s.freeProcs[:n-1]
	} else {
		p = new(proc)
	}
	*p = proc{pid: pid, statFD: -1, mustList: true}
	if s.kept < s.keepBudget {
		s.path = appendTaskPath(s.path[:0], pid, pid, "stat")
		if fd, err := openFile(s.rootFD, s.path); err == nil {
			p.statFD = fd
			s.kept++
		}
	}
	return p
}

func (s *Sampler) releaseProc(p *proc) {
	if p.statFD >= 0 {
		closeFD(p.statFD)
		p.statFD = -1
		s.kept--
	}
	s.freeProcs = append(s.freeProcs, p)
}

func (s *Sampler) alloc(pid, tid int) *task {
	var t *task
	if n := len(s.free); n > 0 {
		t, s.free = s.free[n-1], s.free[:n-1]
		*t = task{}
	} else {
		t = new(task)
	}
	t.pid, t.tid, t.fd = pid, tid, -1
	t.c.PID, t.c.TID = pid, tid
	s.listChanged = true
	s.fresh++
	return t
}

func (s *Sampler) closeTask(t *task) {
	if t.fd >= 0 {
		closeFD(t.fd)
		t.fd = -1
		s.kept--
	}
}

func (s *Sampler) release(t *task) {
	s.listChanged = true
	s.closeTask(t)
	s.free = append(s.free, t)
}

// cursor walks the previous pass's sorted records while a pass merges the
// fresh listing into them: records found again are carried over (keeping
// their open fds and counters), the rest released.
type cursor struct {
	old      []*task
	oi       int
	oldProcs []*proc
	pi       int
}

// beginPass starts the merge of a new pass into s.next and s.nextProcs.
func (s *Sampler) beginPass() {
	s.pass = cursor{old: s.tasks, oldProcs: s.procs}
	s.next = s.next[:0]
	s.nextProcs = s.nextProcs[:0]
}

// carryProc returns the record for pid: last pass's, or a fresh one.
// Processes before pid in the old list have exited and are released.
func (s *Sampler) carryProc(pid int) *proc {
	c := &s.pass
	for c.pi < len(c.oldProcs) && c.oldProcs[c.pi].pid < pid {
		s.releaseProc(c.oldProcs[c.pi])
		c.pi++
	}
	if c.pi < len(c.oldProcs) && c.oldProcs[c.pi].pid == pid {
		c.pi++
		return c.oldProcs[c.pi-1]
	}
	return s.allocProc(pid)
}

// carryTask returns the record for (pid, tid), like carryProc.
func (s *Sampler) carryTask(pid, tid int) *task {
	c := &s.pass
	for c.oi < len(c.old) && (c.old[c.oi].pid < pid || c.old[c.oi].pid == pid && c.old[c.oi].tid < tid) {
		s.release(c.old[c.oi])
		c.oi++
	}
	if c.oi < len(c.old) && c.old[c.oi].pid == pid && c.old[c.oi].tid == tid {
		c.oi++
		return c.old[c.oi-1]
	}
	return s.alloc(pid, tid)
}

// endPass releases what the pass did not find again and swaps the lists.
func (s *Sampler) endPass() {
	s.closeTaskDir()
	c := &s.pass
	for ; c.oi < len(c.old); c.oi++ {
		s.release(c.old[c.oi])
	}
	for ; c.pi < len(c.oldProcs); c.pi++ {
		s.releaseProc(c.oldProcs[c.pi])
	}
	s.tasks, s.next = s.next, c.old[:0]
	s.procs, s.nextProcs = s.nextProcs, c.oldProcs[:0]
	s.pass = cursor{}
}
