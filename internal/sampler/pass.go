package sampler

import "slices"

// gateMinThreads is the thread count from which asking taskstats whether a
// process ran is cheaper than reading each of its threads.
const gateMinThreads = 4

// maxGateBackoff bounds the passes between queries for a busy process to
// 2^3-1 = 7, so one that goes quiet is skipped again within ~8 refreshes.
const maxGateBackoff = 3

// sampleProcess reads one process's threads into s.next and keeps its record
// in s.nextProcs, or releases it when it has gone. It returns how many of
// its files were unreadable.
func (s *Sampler) sampleProcess(p *proc) (bad int) {
	// Before the gate: a process it skips keeps counters that were still
	// exact when it was asked, so they get this reading (readclock.go).
	s.clock.tick()
	skip, ok := s.gate(p)
	if !ok {
		s.releaseProc(p)
		return 0
	}
	listed, err := s.threadSet(p, skip)
	if err != nil {
		if !isGone(err) {
			bad++
		}
		s.releaseProc(p)
		return bad
	}
	p.mustList = false
	group := len(s.next)
	fresh := s.fresh
	bad += s.readThreads(p, skip, listed)
	if p.mustList && !listed {
		// A thread vanished though num_threads did not change, so another
		// took its place (a pool replaced a worker, a load restarted). Read
		// the newcomer now: a thread needs two reads for a rate, and waiting
		// for the next pass to list would cost a refresh without its row.
		s.readNewcomers(p, group)
	}
	p.threads = len(s.next) - group
	p.kernel = p.threads == 1 && s.next[group].kernel && s.next[group].tid == p.pid
	if p.threads == 0 {
		s.releaseProc(p)
		return bad
	}
	s.nextProcs = append(s.nextProcs, p)
	// Each thread holds the process's name and cgroup. Only a new record,
	// or a new name or group, needs the threads visited: at 10,000 threads
	// two walks over them a pass, each a cache miss a thread.
	threads := s.next[group:]
	all := s.fresh != fresh
	if name := processComm(threads, p.pid); all || name != p.givenComm {
		giveComm(threads, name, s.procPass)
		p.givenComm = name
	}
	if !skip && !s.noCgroups {
		s.processCgroup(p)
	}
	if all || p.cgroup != p.givenCgroup {
		for _, t := range threads {
			if t.c.Cgroup != p.cgroup {
				t.c.Cgroup, t.touched = p.cgroup, s.procPass
			}
		}
		p.givenCgroup = p.cgroup
	}
	return bad
}

// gate asks taskstats whether anything in p ran since the last query. skip
// means nothing did, so every thread's counters are still exact; ok false
// means the process has exited.
func (s *Sampler) gate(p *proc) (skip, ok bool) {
	if s.ts == nil || p.mustList || p.threads < gateMinThreads {
		return false, true
	}
	if p.gateWait > 0 {
		p.gateWait--
		return false, true
	}
	act, err := s.ts.query(p.pid)
	switch {
	case err == nil:
		// Equal sums mean nothing in the process ran between the two
		// queries, so what we read after the earlier one is still exact,
		// however many passes ago that was.
		skip = p.gateValid && act == p.gate
		if skip {
			s.gateSkips++
			p.gateMisses = 0
		} else if p.gateValid {
			p.gateMisses = min(p.gateMisses+1, maxGateBackoff)
			p.gateWait = 1<<p.gateMisses - 1
		}
		p.gate, p.gateValid = act, true
		return skip, true
	case isGone(err):
		return false, false
	default:
		s.ts.close()
		s.ts = nil
		return false, true
	}
}

// threadSet sets s.tids to p's threads, sorted. It skips listing the task
// directory when the thread count is what we saw last time and none of our
// threads vanished: getdents over a 10,000-entry task directory costs as
// much as reading every one of its threads.
func (s *Sampler) threadSet(p *proc, skip bool) (listed bool, err error) {
	list := !skip && (p.mustList || p.statFD < 0)
	if !list && !skip && !p.kernel {
		n, err := s.numThreads(p)
		if err != nil {
			return false, err
		}
		list = n != p.threads
	}
	if !list {
		return false, nil // readThreads takes the last pass's records
	}
	return true, s.listThreads(p.pid)
}

// listThreads sets s.tids to pid's task directory, sorted.
func (s *Sampler) listThreads(pid int) error {
	s.path = append(appendInt(s.path[:0], pid), "/task\x00"...)
	var err error
	s.tids, err = readDirInts(s.rootFD, s.path, s.dirBuf, s.tids[:0])
	if err == nil && !slices.IsSorted(s.tids) {
		slices.Sort(s.tids)
	}
	return err
}

// readNewcomers lists p's task directory again and reads the threads that
// s.next[group:] does not hold yet, keeping s.next sorted. A thread it
// cannot read is left for the next pass to count: readThreads may have
// counted it already.
func (s *Sampler) readNewcomers(p *proc, group int) {
	if err := s.listThreads(p.pid); err != nil {
		return // the process is on its way out; next pass settles it
	}
	p.mustList = false
	known := s.next[group:]
	added := false
	for _, tid := range s.tids {
		// known is sorted by TID, as the pass appends it.
		if _, ok := slices.BinarySearchFunc(known, tid, func(t *task, tid int) int { return t.tid - tid }); ok {
			continue
		}
		t := s.alloc(p.pid, tid)
		if s.update(t) == updated {
			s.next = append(s.next, t)
			added = true
			continue
		}
		p.mustList = true
		s.release(t)
	}
	if added {
		slices.SortFunc(s.next[group:], func(a, b *task) int { return a.tid - b.tid })
	}
}

// readThreads refreshes p's threads and appends the live ones to s.next:
// those in s.tids when listed, else those the last pass found. It returns
// how many were unreadable.
func (s *Sampler) readThreads(p *proc, skip, listed bool) (bad int) {
	if listed {
		for _, tid := range s.tids {
			bad += s.readThread(p, s.carryTask(p.pid, tid), skip)
		}
		return bad
	}
	c := &s.pass
	for c.oi < len(c.old) && c.old[c.oi].pid < p.pid {
		s.release(c.old[c.oi]) // an exited process's
		c.oi++
	}
	for c.oi < len(c.old) && c.old[c.oi].pid == p.pid {
		c.oi++
		bad += s.readThread(p, c.old[c.oi-1], skip)
	}
	return bad
}

// readThread refreshes t, one of p's threads, and appends it to s.next
// if it is live. It returns 1 if it was unreadable.
func (s *Sampler) readThread(p *proc, t *task, skip bool) (bad int) {
	if skip {
		// Nothing in this process ran since the last pass.
		t.c.ReadAt = s.clock.stamp
		s.next = append(s.next, t)
		return 0
	}
	switch s.update(t) {
	case updated:
		s.next = append(s.next, t)
		return 0
	case unreadable:
		bad = 1
	}
	// A thread we knew is gone, or was never readable: list the
	// directory afresh next time in case another took its place.
	p.mustList = true
	s.release(t)
	return bad
}
