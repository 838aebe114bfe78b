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
	bad += s.readThreads(p, skip)
	if p.mustList && !listed {
		// A thread vanished though num_threads did not change, so another
		// took its place (a pool replaced a worker, a load restarted). Read
		// the newcomer now: a thread needs two reads for a rate, and waiting
		// for the next pass to list would cost a refresh without its row.
		s.readNewcomers(p, group)
	}
	p.threads = len(s.next) - group
	if p.threads == 0 {
		s.releaseProc(p)
		return bad
	}
	s.nextProcs = append(s.nextProcs, p)
	setProcessComm(s.next[group:], p.pid, s.procPass)
	if !skip && !s.noCgroups {
		s.processCgroup(p)
	}
	for _, t := range s.next[group:] {
		if t.c.Cgroup != p.cgroup {
			t.c.Cgroup, t.touched = p.cgroup, s.procPass
		}
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
	if !list && !skip {
		n, err := s.numThreads(p)
		if err != nil {
			return false, err
		}
		list = n != p.threads
	}
	if !list {
		s.tids = s.knownTIDs(p.pid, s.tids[:0])
		return false, nil
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

// readThreads refreshes every thread in s.tids and appends the live ones to
// s.next. It returns how many were unreadable.
func (s *Sampler) readThreads(p *proc, skip bool) (bad int) {
	for _, tid := range s.tids {
		t := s.carryTask(p.pid, tid)
		if skip {
			// Nothing in this process ran since the last pass.
			t.c.ReadAt = s.clock.stamp
			s.next = append(s.next, t)
			continue
		}
		switch s.update(t) {
		case updated:
			s.next = append(s.next, t)
			continue
		case unreadable:
			bad++
		}
		// A thread we knew is gone, or was never readable: list the
		// directory afresh next time in case another took its place.
		p.mustList = true
		s.release(t)
	}
	return bad
}
