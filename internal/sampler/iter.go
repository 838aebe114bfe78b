package sampler

import (
	"cmp"
	"errors"
	"slices"
	"syscall"
	"time"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/taskiter"
)

// Which path produced a Sample's tasks (Sampler.Source).
const (
	SourceProc     = "proc"
	SourceTaskIter = "bpf-task-iter"
)

// iterPath is the sampler's memory when a BPF task walk (internal/taskiter)
// reads every thread in one call instead of /proc. It produces the very
// Sample the /proc path would: the same kernel fields, sorted by PID then
// TID, names sanitized once when they change.
//
// The walk returns threads in the kernel's list order (processes, then
// each one's threads, by creation), which stays the same from pass to pass
// with newcomers inserted, and rewrites only the records of threads that
// ran or moved (taskiter.Iter.Changed). A record it left alone is the
// thread that held that position last pass, unmoved: the pass does not
// read it at all. A rewritten one is first looked for at the position its
// thread had last pass; only a pass in which threads came or went looks
// the others up by TID and re-sorts, and then only the newcomers.
type iterPath struct {
	it *taskiter.Iter
	// slots hold the threads; a thread keeps its slot for life, so the
	// index and the orders below stay valid as others come and go.
	slots []iterTask
	free  []int32
	// keys is each slot's (PID, TID) as PID<<32|TID, 0 for a free slot:
	// sorting and merging read it instead of the slots.
	keys []uint64
	// index maps a TID to its slot.
	index map[int32]int32
	// sorted is the slots in (PID, TID) order, as Sample.Tasks; order the
	// slots by their position in the last pass's walk, next this pass's,
	// -1 at a record that is no thread's (holes counts those in order);
	// fresh the slots of this pass's newcomers.
	sorted, merged, order, next, fresh []int32
	holes                              int
	// changed is the positions the walk rewrote, work those this pass
	// reads (changed, and any the last pass holds no thread for), with
	// workBits the same as a bitmap.
	changed, work []int32
	workBits      []uint64
	// moves is the runs of records the walk moved rather than rewrote;
	// displaced the threads the last pass had at their destinations,
	// gone unless found elsewhere (applyMoves).
	moves     []taskiter.Move
	displaced []int32
	// ranPIDs is the processes of the threads that ran in this pass,
	// sorted; a process may repeat.
	ranPIDs []int
	pass    uint32
	// stamp is the pass's reading of the clock, right after the walk:
	// every walked thread's ReadAt.
	stamp time.Duration
	rec   taskiter.Record
	// lastComm and lastMask are the raw name and affinity last cleaned,
	// with what they gave: a pool's threads share both, so its newcomers
	// take the strings already made instead of three allocations each.
	lastComm, lastCommClean string
	lastMask, lastList      string
	// walked is the processes the walk reported, sorted. extra holds the
	// threads, sorted by (PID, TID), of processes /proc lists but the walk
	// did not report, read from /proc as the /proc path reads them: the
	// kernel's task list can lack a task its PID table has (seen with a
	// VM's PID 1), and a process may start between the walk and the
	// listing. nextExtra is the pass's new list.
	walked           []int
	extra, nextExtra []*task
	// unwalked is the listed processes the walk did not report, as
	// the whole listing and the sweep since found them. The sweep
	// (sweep.go) lists /proc a share at a time; where it cannot serve,
	// listAge counts the passes until the next whole listing, which walks
	// every thread's PID in the kernel (a millisecond at 10,000 threads,
	// 10 at 100,000): a process the task list lacks is rare and lasting,
	// so it is found within relistEvery passes.
	unwalked []int
	listAge  uint8
	sw       sweepState
	// listedWhole is whether this pass listed /proc whole.
	listedWhole bool
	// setChanged is whether this pass found a walked thread come or go.
	setChanged  bool
	list        []byte
	noTaskstats bool
}

type iterTask struct {
	c model.TaskCounters
	// startNs is the task's start_boottime: with the IDs, what tells a
	// thread from a later one that reused its TID.
	startNs uint64
	// pos is the thread's position in the walk of the pass that last
	// found it; seen is that pass when its record was read in it (a
	// record not rewritten is not read).
	pos  int32
	seen uint32
	// comm and mask are the raw name and affinity words: c.Comm and
	// c.CPUsAllowed are derived from them only when they change. procComm
	// is the raw /proc name of a kernel thread (readIterComm).
	comm, mask, procComm string
}

// initPIDNamespace is the inode of the initial PID namespace
// (PROC_PID_INIT_INO). The walk reports kernel-wide IDs, which are what
// /proc shows only there.
const initPIDNamespace = 0xEFFFFFFC

// openIter starts the task walk when it can serve this sampler: root is
// this process's own procfs in the initial PID namespace, and the kernel
// and privileges allow it. Otherwise the /proc path serves, and why is
// returned for Sampler.SourceNote.
func openIter(fs procfs.FS, targets []int, noTaskstats bool, passes int) (*iterPath, string) {
	if !sameNamespace(fs) {
		return nil, "the procfs root is not this process's own"
	}
	var st syscall.Stat_t
	if err := syscall.Stat(fs.Path("self/ns/pid"), &st); err != nil || st.Ino != initPIDNamespace {
		return nil, "not in the initial PID namespace"
	}
	var pids []int
	if targets != nil {
		pids = targets
	}
	it, err := taskiter.Open(taskiter.Options{PIDs: pids, Passes: passes})
	if err != nil {
		return nil, err.Error()
	}
	return &iterPath{it: it, noTaskstats: noTaskstats, sw: sweepState{fd: -1}}, ""
}

// close frees the walk; the unwalked threads' files are the sampler's to
// close (closeIter).
func (ip *iterPath) close() {
	if ip != nil {
		ip.it.Close()
		ip.sw.close()
	}
}

// closeIter closes the walk and the files of the threads read from /proc
// beside it.
func (s *Sampler) closeIter() {
	if s.it == nil {
		return
	}
	for _, t := range s.it.extra {
		s.release(t)
	}
	s.it.extra = nil
	s.it.close()
	s.it = nil
}

// fallBack gives up on the walk for good after it failed, and lets the
// /proc path serve from this pass on. The counters are the same kernel
// fields either way, so rates carry on across the switch.
func (s *Sampler) fallBack(err error) {
	noTaskstats := s.it.noTaskstats
	s.closeIter()
	// The /proc path's tasks are not the walk's: its first pass names no
	// earlier Sample.
	s.exportedSeq = 0
	s.iterNote = "the task walk failed: " + bpfutil.FirstLine(err)
	if !noTaskstats && sameNamespace(s.fs) {
		s.ts, _ = openTaskstats()
	}
}

// errFellBack tells Sample that the walk failed and the /proc path is to
// make this pass.
var errFellBack = errors.New("task walk failed; /proc serves")

// sampleIter makes one pass with the task walk and exports it into dst.
func (s *Sampler) sampleIter(dst *model.Sample) error {
	ip := s.it
	ip.pass++
	ip.fresh = ip.fresh[:0]
	// The threads read from /proc beside the walk (readUnwalked) count
	// their passes and changes as the /proc path's do, for the hint.
	s.procPass++
	s.listChanged = false
	n, err := ip.it.Walk()
	// One walk reads every thread within one call: a reading right after
	// it is when each record was read, to within the walk's few ms.
	s.clock.tick()
	ip.stamp = s.clock.stamp
	if err == nil {
		s.tasksRead()
	}
	if err == nil && ip.slots == nil {
		ip.reserve(n)
	}
	if err == nil {
		ip.changed, err = ip.it.Changed(ip.changed[:0], n)
	}
	var gone bool
	if err == nil {
		ip.moves, err = ip.it.Moves(ip.moves[:0], n, len(ip.order))
	}
	if err == nil && len(ip.moves) > 0 {
		ip.applyMoves(n)
	}
	if err == nil {
		gone, err = s.matchWalk(n)
	}
	if err == nil && len(ip.displaced) > 0 {
		gone = ip.releaseDisplaced() || gone
	}
	if err != nil {
		s.fallBack(err)
		return errFellBack
	}
	ip.setChanged = gone || len(ip.fresh) > 0
	if ip.setChanged {
		ip.resort()
	}
	ip.order, ip.next = ip.next, ip.order
	dst.Unreadable = 0
	ip.listedWhole = ip.sw.fd < 0 && (ip.pass == 1 || ip.listAge == 0) && s.targets == nil
	switch {
	case s.targets != nil:
		if err := s.listProcesses(); err != nil {
			return err
		}
	case ip.sw.fd >= 0:
		// The sweep goes on (sweep.go); readUnwalked drops the
		// processes it found that have gone or are walked now.
		s.pids = append(s.pids[:0], ip.unwalked...)
		s.pids = ip.sw.sweep(s.pids, ip.walked, ip.sw.budget(len(ip.walked)))
	case ip.pass == 1:
		if err := s.listForSweep(); err != nil {
			return err
		}
		ip.listAge = relistEvery(n)
	case ip.listAge == 0:
		// No sweep here: the whole listing, now and then.
		if err := s.listProcesses(); err != nil {
			return err
		}
		ip.listAge = relistEvery(n)
	default:
		ip.listAge--
		s.pids = append(s.pids[:0], ip.unwalked...)
	}
	dst.Unreadable += s.readUnwalked()
	live := s.exportIter(dst)
	if s.targets != nil && !live {
		return ErrTargetsGone
	}
	if s.noCgroups {
		dst.Cgroups = dst.Cgroups[:0]
	} else {
		s.readCgroups(dst)
	}
	return nil
}

// matchWalk makes this pass's walk order, ip.next, from the last pass's,
// ip.order, reading only the records the walk rewrote and any position the
// last pass has no thread for; a record left alone is the thread the last
// pass had there. It releases the threads that have gone and reports
// whether any did.
func (s *Sampler) matchWalk(n int) (gone bool, err error) {
	ip := s.it
	prev := ip.order
	limit := min(n, len(prev))
	ip.next = slices.Grow(ip.next[:0], n)[:n]
	next := ip.next
	copy(next, prev[:limit])
	// The positions to read, in order: the rewritten ones, the holes of
	// the last pass, and those past its end.
	ip.work = ip.work[:0]
	c := ip.changed
	for len(c) > 0 && int(c[0]) < limit {
		if ip.holes > 0 {
			ip.work = appendHoles(ip.work, prev, int(c[0]))
		}
		ip.work = append(ip.work, c[0])
		c = c[1:]
	}
	if ip.holes > 0 {
		ip.work = appendHoles(ip.work, prev, limit)
	}
	for i := limit; i < n; i++ {
		ip.work = append(ip.work, int32(i))
	}
	words := (max(n, len(prev)) + 63) / 64
	ip.workBits = slices.Grow(ip.workBits[:0], words)[:words]
	clear(ip.workBits)
	for _, i := range ip.work {
		ip.workBits[i/64] |= 1 << (i % 64)
	}
	// atRest reports whether slot k is the thread of a position this pass
	// does not read: found already, so a record naming it again is a
	// walk racing an exec.
	atRest := func(k int32) bool {
		p := ip.slots[k].pos
		return int(p) < limit && prev[p] == k && ip.workBits[p/64]&(1<<(p%64)) == 0
	}
	ip.holes = 0
	ip.ranPIDs = ip.ranPIDs[:0]
	shift, last := 0, int32(-1) // where the last pass had this position's thread, relative to it
	for _, i := range ip.work {
		if err := ip.it.Record(int(i), &ip.rec); err != nil {
			return false, err
		}
		r := &ip.rec
		if i != last+1 {
			shift = 0 // the position before is at rest: so is the walk's order here
		}
		last = i
		slot, ran := int32(-1), false
		if g := int(i) + shift; g >= 0 && g < len(prev) && prev[g] >= 0 && ip.slots[prev[g]].same(r, ip.pass) && !atRest(prev[g]) {
			slot = prev[g]
		} else if k, ok := ip.index[int32(r.TID)]; ok && ip.slots[k].same(r, ip.pass) {
			if atRest(k) {
				next[i] = -1
				ip.holes++
				continue
			}
			slot = k
			shift = int(ip.slots[k].pos) - int(i) // resume the positional guess after it
		}
		if slot < 0 {
			if k, ok := ip.index[int32(r.TID)]; ok && ip.slots[k].seen == ip.pass {
				next[i] = -1 // seen already this pass: a walk racing an exec
				ip.holes++
				continue
			}
			slot = ip.alloc()
			t := &ip.slots[slot]
			*t = iterTask{startNs: r.StartNs}
			t.c.PID, t.c.TID = r.PID, r.TID
			t.c.StartTime = max(ip.it.StartTicks(r.StartNs), 1) // 0 means unread
			ip.index[int32(r.TID)] = slot
			ip.keys[slot] = sortKey(r.PID, r.TID)
			ip.fresh = append(ip.fresh, slot)
			ran = s.updateIter(t, r, true)
		} else {
			ran = s.updateIter(&ip.slots[slot], r, false)
		}
		t := &ip.slots[slot]
		t.seen, t.pos = ip.pass, i
		next[i] = slot
		// The walk lists a process's threads together: one entry per
		// run of them, not one per thread, which a first pass would
		// append and sort by the thousand.
		if ran && (len(ip.ranPIDs) == 0 || ip.ranPIDs[len(ip.ranPIDs)-1] != t.c.PID) {
			ip.ranPIDs = append(ip.ranPIDs, t.c.PID)
		}
	}
	// A thread of the last pass has gone when its position was read in
	// this one, or is past this walk's end, and no record named it.
	for _, i := range ip.work {
		if int(i) < len(prev) {
			gone = ip.release(prev[i]) || gone
		}
	}
	for _, k := range prev[limit:] {
		gone = ip.release(k) || gone
	}
	slices.Sort(ip.ranPIDs)
	return gone, nil
}

// applyMoves takes the last pass's order along with the records the walk
// moved: a thread whose record moved unchanged keeps its slot at its new
// position, unread, as if it had been there last pass. The sources left
// behind become holes (read if the walk reaches them), and the threads
// the destinations held are kept in displaced: gone, unless this pass
// finds them elsewhere. It costs a copy of the order, once in a pass in
// which threads came or went, against reading every record after them.
//
// A move up (threads born before the records) may put records past the
// last pass's end: the order grows to this walk's n, its new positions
// holes until a move fills them.
func (ip *iterPath) applyMoves(n int) {
	prev := ip.order
	ip.next = append(ip.next[:0], prev...)
	for len(ip.next) < n {
		ip.next = append(ip.next, -1)
	}
	moved := ip.next
	ip.displaced = ip.displaced[:0]
	for _, m := range ip.moves {
		for j := range m.Count {
			if d := m.Dst + j; d < len(prev) && prev[d] >= 0 {
				ip.displaced = append(ip.displaced, prev[d])
			}
			moved[m.Src+j] = -1
		}
	}
	for _, m := range ip.moves {
		for j := range m.Count {
			k := prev[m.Src+j]
			moved[m.Dst+j] = k
			if k >= 0 {
				ip.slots[k].pos = int32(m.Dst + j)
			}
		}
	}
	ip.holes = 0
	for _, k := range moved {
		if k < 0 {
			ip.holes++
		}
	}
	ip.order, ip.next = moved, prev
}

// releaseDisplaced releases the threads whose positions moved records
// took, unless this pass found them or carried them along to another
// position; it reports whether any went.
func (ip *iterPath) releaseDisplaced() (gone bool) {
	for _, k := range ip.displaced {
		t := &ip.slots[k]
		if t.seen == ip.pass || t.c.TID == 0 {
			continue // found, or released already
		}
		if p := int(t.pos); p < len(ip.next) && ip.next[p] == k {
			continue // carried
		}
		gone = ip.release(k) || gone
	}
	ip.displaced = ip.displaced[:0]
	return gone
}

// appendHoles appends to work the positions below end, from the last one
// in it on, at which prev holds no thread.
func appendHoles(work, prev []int32, end int) []int32 {
	from := 0
	if len(work) > 0 {
		from = int(work[len(work)-1]) + 1
	}
	for p := from; p < end; p++ {
		if prev[p] < 0 {
			work = append(work, int32(p))
		}
	}
	return work
}

// release frees slot k, a thread of the last pass, unless this pass found
// it; it reports whether it did.
func (ip *iterPath) release(k int32) bool {
	if k < 0 || ip.slots[k].seen == ip.pass {
		return false
	}
	t := &ip.slots[k]
	if ip.index[int32(t.c.TID)] == k {
		delete(ip.index, int32(t.c.TID))
	}
	*t = iterTask{}
	ip.keys[k] = 0
	ip.free = append(ip.free, k)
	return true
}

func sortKey(pid, tid int) uint64 { return uint64(pid)<<32 | uint64(uint32(tid)) }

// relistPasses is how often, in passes, /proc is listed for processes the
// walk does not report, on a host of up to relistThreads threads.
const (
	relistPasses  = 16
	relistThreads = 10000
)

// relistEvery is in how many passes /proc is listed again on a host of
// threads threads: every relistPasses, and less often in proportion past
// relistThreads, since the listing's cost grows with the threads while a
// pass's need not (the walk steps over idle ones), so that it stays about
// a tenth of a millisecond a pass; at most every 255.
func relistEvery(threads int) uint8 {
	return uint8(min(relistPasses*max(1, (threads+relistThreads-1)/relistThreads), 255))
}

// readUnwalked reads from /proc the threads of every process in s.pids
// (listed, or the last listing's unwalked ones) that the walk did not
// report, into ip.extra, and keeps those PIDs in ip.unwalked. It returns
// how many threads were unreadable.
func (s *Sampler) readUnwalked() (bad int) {
	ip := s.it
	old, oi := ip.extra, 0
	ip.nextExtra = ip.nextExtra[:0]
	ip.unwalked = ip.unwalked[:0]
	wi := 0
	for _, pid := range s.pids {
		for wi < len(ip.walked) && ip.walked[wi] < pid {
			wi++
		}
		if wi < len(ip.walked) && ip.walked[wi] == pid {
			continue
		}
		if s.listThreads(pid) != nil {
			continue // gone since the listing
		}
		ip.unwalked = append(ip.unwalked, pid)
		group := len(ip.nextExtra)
		for _, tid := range s.tids {
			for oi < len(old) && (old[oi].pid < pid || old[oi].pid == pid && old[oi].tid < tid) {
				s.release(old[oi])
				oi++
			}
			var t *task
			if oi < len(old) && old[oi].pid == pid && old[oi].tid == tid {
				t = old[oi]
				oi++
			} else {
				t = s.alloc(pid, tid)
			}
			switch s.update(t) {
			case updated:
				ip.nextExtra = append(ip.nextExtra, t)
				continue
			case unreadable:
				bad++
			}
			s.release(t)
		}
		setProcessComm(ip.nextExtra[group:], pid, s.procPass)
	}
	s.closeTaskDir()
	for ; oi < len(old); oi++ {
		s.release(old[oi])
	}
	ip.extra, ip.nextExtra = ip.nextExtra, old[:0]
	return bad
}

// same reports whether t is the thread r describes and its record has not
// been read yet in this pass.
func (t *iterTask) same(r *taskiter.Record, pass uint32) bool {
	return t.c.TID == r.TID && t.c.PID == r.PID && t.startNs == r.StartNs && t.seen != pass
}

// reserve sizes the records, the index among them, for the n threads of
// the first walk, with room for some to come: grown an append at a time,
// they were copied over and over, and their pages faulted in again each
// time. It runs once: a walk that found nothing still leaves slots
// non-nil, so a pass that keeps finding nothing does not remake them.
func (ip *iterPath) reserve(n int) {
	n += n / 8
	ip.slots = make([]iterTask, 0, n)
	ip.keys = make([]uint64, 0, n)
	ip.index = make(map[int32]int32, n)
	ip.order, ip.next, ip.fresh = make([]int32, 0, n), make([]int32, 0, n), make([]int32, 0, n)
	ip.sorted, ip.merged = make([]int32, 0, n), make([]int32, 0, n)
	ip.changed, ip.work = make([]int32, 0, n), make([]int32, 0, n)
}

func (ip *iterPath) alloc() int32 {
	if n := len(ip.free); n > 0 {
		k := ip.free[n-1]
		ip.free = ip.free[:n-1]
		return k
	}
	ip.slots = append(ip.slots, iterTask{})
	ip.keys = append(ip.keys, 0)
	return int32(len(ip.slots) - 1)
}

// resort drops the threads that have gone (released, key 0) from the
// (PID, TID) order, merges the newcomers into it, and lists the walked
// processes anew.
func (ip *iterPath) resort() {
	keys := ip.keys
	slices.SortFunc(ip.fresh, func(a, b int32) int { return cmp.Compare(keys[a], keys[b]) })
	ip.merged = ip.merged[:0]
	f := ip.fresh
	for _, k := range ip.sorted {
		if keys[k] == 0 {
			continue
		}
		for len(f) > 0 && keys[f[0]] < keys[k] {
			ip.merged = append(ip.merged, f[0])
			f = f[1:]
		}
		ip.merged = append(ip.merged, k)
	}
	ip.merged = append(ip.merged, f...)
	ip.sorted, ip.merged = ip.merged, ip.sorted
	ip.walked = ip.walked[:0]
	for _, k := range ip.sorted {
		if pid := int(keys[k] >> 32); len(ip.walked) == 0 || ip.walked[len(ip.walked)-1] != pid {
			ip.walked = append(ip.walked, pid)
		}
	}
	ip.sw.makeRuns(keys, ip.sorted)
}

// updateIter copies a record into t and reports whether the thread ran
// (or is new). The name and affinity are cleaned and formatted only when
// their raw bytes changed.
func (s *Sampler) updateIter(t *iterTask, r *taskiter.Record, fresh bool) (ran bool) {
	c := &t.c
	ran = fresh || r.Timeslices != c.Timeslices || r.RunNs != c.RunNs
	c.VoluntarySwitches, c.InvoluntarySwitches = r.VoluntarySwitches, r.InvoluntarySwitches
	c.RunNs, c.WaitNs, c.Timeslices = r.RunNs, r.WaitNs, r.Timeslices
	c.State = taskiter.StateLetter(r.State, r.ExitState)
	c.LastCPU = r.CPU
	c.Counters[model.Migrations] = r.Migrations
	ip := s.it
	renamed := string(r.Comm) != t.comm
	if renamed {
		if string(r.Comm) != ip.lastComm {
			ip.lastComm = string(r.Comm)
			ip.lastCommClean = sanitize.Name(ip.lastComm)
		}
		t.comm, t.procComm, c.Comm = ip.lastComm, "", ip.lastCommClean
	}
	// /proc names a workqueue worker by what it works on as well
	// ("kworker/0:1-events"), which changes as it runs, and a kernel
	// thread by its full name where comm holds only 15 bytes of it:
	// only /proc has those.
	if r.Workqueue && ran || r.Kernel && len(r.Comm) == 15 && renamed {
		s.readIterComm(t)
	}
	if string(r.Mask) != t.mask {
		if string(r.Mask) != ip.lastMask {
			ip.lastMask = string(r.Mask)
			ip.list = taskiter.AppendCPUList(ip.list[:0], r.Mask, ip.it.CPUs())
			ip.lastList = string(ip.list)
		}
		t.mask, c.CPUsAllowed = ip.lastMask, ip.lastList
	}
	return ran
}

// readIterComm reads a kernel thread's name as /proc shows it.
func (s *Sampler) readIterComm(t *iterTask) {
	s.path = appendTaskPath(s.path[:0], t.c.PID, t.c.TID, "comm")
	n, err := readFileAt(s.rootFD, s.path, &s.buf, procfs.LimitLine)
	if err != nil {
		return // gone, or not permitted: keep the kernel's comm
	}
	if name := procfs.ParseComm(s.buf[:n]); string(name) != t.procComm {
		t.procComm = string(name)
		t.c.Comm = sanitize.Name(t.procComm)
	}
}

// exportIter copies the threads, the walk's and the unwalked processes',
// into dst in (PID, TID) order, gives each its process's name and cgroup,
// and reports whether any thread is alive (not a zombie). Processes are
// kept in s.procs for the cgroups.
//
// When the pass found the last one's threads, no more and no fewer, dst
// says so and lists the threads that moved, as the /proc path's do: those
// whose records the walk rewrote (or the /proc read touched), and every
// thread of a process whose name or cgroup changed. As root, serve's
// scrapes and the monitor's refreshes then derive over those alone.
func (s *Sampler) exportIter(dst *model.Sample) (live bool) {
	ip := s.it
	same := s.exportedSeq != 0 && s.exportedPass == s.procPass-1 && !ip.setChanged && !s.listChanged
	dst.Tasks = taskRoom(dst.Tasks, len(ip.sorted)+len(ip.extra))
	dst.Moved = dst.Moved[:0]
	pc := procCursor{old: s.procs}
	s.nextProcs = s.nextProcs[:0]
	g, x := 0, 0
	for g < len(ip.sorted) || x < len(ip.extra) {
		if x == len(ip.extra) || g < len(ip.sorted) && int(ip.keys[ip.sorted[g]]>>32) < ip.extra[x].pid {
			g, live = s.exportWalked(dst, g, &pc, live, same)
			continue
		}
		pid := ip.extra[x].pid
		p, _ := s.carryIterProc(&pc, pid)
		if !s.noCgroups {
			s.processCgroup(p)
		}
		for ; x < len(ip.extra) && ip.extra[x].pid == pid; x++ {
			t := ip.extra[x]
			if t.c.Cgroup != p.cgroup {
				t.c.Cgroup, t.touched = p.cgroup, s.procPass
			}
			live = live || t.c.State != 'Z' && t.c.State != 'X'
			if same && t.touched == s.procPass {
				dst.Moved = append(dst.Moved, int32(len(dst.Tasks)))
			}
			dst.Tasks = append(dst.Tasks, t.c)
		}
	}
	for ; pc.i < len(pc.old); pc.i++ {
		s.releaseProc(pc.old[pc.i])
	}
	s.procs, s.nextProcs = s.nextProcs, pc.old[:0]
	// Its array no longer holds what the /proc path last wrote there.
	s.filled = [2]filledTasks{}
	dst.Seq, dst.SameTasksAs = model.NextSeq(), 0
	if same {
		dst.SameTasksAs = s.exportedSeq
	}
	s.exportedSeq, s.exportedPass = dst.Seq, s.procPass
	dst.Self = selfUsage()
	dst.Source = SourceTaskIter
	return live
}

// exportWalked exports the walked process whose threads start at
// ip.sorted[g] and returns where the next one starts. It reads the
// compact keys to find them and copies each thread's counters once; with
// same, it lists in dst.Moved those that moved (exportIter).
func (s *Sampler) exportWalked(dst *model.Sample, g int, pc *procCursor, live, same bool) (int, bool) {
	ip := s.it
	keys := ip.keys
	pid := keys[ip.sorted[g]] >> 32
	end, leader := g, g
	for ; end < len(ip.sorted); end++ {
		key := keys[ip.sorted[end]]
		if key>>32 != pid {
			break
		}
		if uint32(key) == uint32(pid) {
			leader = end
		}
	}
	for j := g; !live && j < end; j++ {
		st := ip.slots[ip.sorted[j]].c.State
		live = st != 'Z' && st != 'X'
	}
	_, ran := slices.BinarySearch(ip.ranPIDs, int(pid))
	p, fresh := s.carryIterProc(pc, int(pid))
	if (ran || fresh) && !s.noCgroups {
		s.processCgroup(p)
	}
	name := ip.slots[ip.sorted[leader]].c.Comm
	// A renamed leader or a move to another cgroup changes every thread
	// of the process, read or not.
	all := fresh || name != p.shownComm || p.cgroup != p.shownCgroup
	p.shownComm, p.shownCgroup = name, p.cgroup
	base := len(dst.Tasks)
	dst.Tasks = dst.Tasks[:base+end-g]
	for j, k := range ip.sorted[g:end] {
		d := &dst.Tasks[base+j]
		*d = ip.slots[k].c
		d.ProcessComm, d.Cgroup, d.ReadAt = name, p.cgroup, ip.stamp
		if same && (all || ip.slots[k].seen == ip.pass) {
			dst.Moved = append(dst.Moved, int32(base+j))
		}
	}
	return end, live
}

// procCursor walks the last pass's process records while a pass carries
// them over.
type procCursor struct {
	old []*proc
	i   int
}

// carryIterProc returns pid's record, last pass's or a fresh one, and
// appends it to s.nextProcs; processes before pid have gone.
func (s *Sampler) carryIterProc(pc *procCursor, pid int) (p *proc, fresh bool) {
	for pc.i < len(pc.old) && pc.old[pc.i].pid < pid {
		s.releaseProc(pc.old[pc.i])
		pc.i++
	}
	if pc.i < len(pc.old) && pc.old[pc.i].pid == pid {
		p = pc.old[pc.i]
		pc.i++
	} else {
		p, fresh = s.newIterProc(pid), true
	}
	s.nextProcs = append(s.nextProcs, p)
	return p, fresh
}

// newIterProc is a process record for the cgroups alone: the walk needs
// no open files.
func (s *Sampler) newIterProc(pid int) *proc {
	var p *proc
	if n := len(s.freeProcs); n > 0 {
		p, s.freeProcs = s.freeProcs[n-1], s.freeProcs[:n-1]
	} else {
		p = new(proc)
	}
	*p = proc{pid: pid, statFD: -1}
	return p
}

// Source names the path that reads the tasks: SourceTaskIter or
// SourceProc.
func (s *Sampler) Source() string {
	if s.it != nil {
		return SourceTaskIter
	}
	return SourceProc
}

// ProbeSource opens a sampler on the procfs at root as the monitor would
// and says which path would read the tasks, and why not the walk.
func ProbeSource(root string) (source, note string, err error) {
	s, err := New(Config{Root: root, NoCgroups: true, NoTaskstats: true})
	if err != nil {
		return "", "", err
	}
	defer s.Close()
	return s.Source(), s.SourceNote(), nil
}

// SourceNote says why the task walk is not in use ("" when it is, or was
// not asked for).
func (s *Sampler) SourceNote() string { return s.iterNote }
