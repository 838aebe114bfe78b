// Package sampler makes one pass over procfs per tick and produces a raw
// model.Sample. It keeps every thread's schedstat file open and re-reads it
// with pread: the third field (times scheduled in) only moves when the
// thread ran, so the costlier status and stat files are re-read only for
// threads that ran since the last pass. At 10,000 mostly idle threads that is
// the difference between ~110 ms and a few ms of CPU per refresh.
package sampler

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
)

// ErrTargetsGone means every process given with Config.PIDs has exited.
var ErrTargetsGone = errors.New("every watched process has exited")

// Config selects what to sample.
type Config struct {
	// Root is the procfs root, "/proc" in production.
	Root string
	// PIDs limits sampling to these processes (all their threads); nil
	// samples every process.
	PIDs []int
	// HotThreshold is the switches/s at which a thread counts as hot; 0
	// means the model's default.
	HotThreshold float64
	// NoTaskstats turns off the process-level activity gate (see
	// taskstats.go) and reads every thread every pass.
	NoTaskstats bool
}

// gateMinThreads is the thread count from which asking taskstats whether a
// process ran is cheaper than reading each of its threads.
const gateMinThreads = 4

// task is the sampler's memory of one thread between passes.
type task struct {
	pid, tid int
	// fd is the kept-open schedstat file, or -1 when the fd budget ran out
	// and the file is opened afresh each pass.
	fd int
	c  model.TaskCounters
}

// proc is the sampler's memory of one process.
type proc struct {
	pid int
	// statFD is the kept-open /proc/PID/stat, whose num_threads tells
	// whether the task directory needs listing again; -1 when not kept.
	statFD int
	// threads is how many threads were read last pass.
	threads int
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
}

// maxGateBackoff bounds the passes between queries for a busy process to
// 2^3-1 = 7, so one that goes quiet is skipped again within ~8 refreshes.
const maxGateBackoff = 3

const (
	sysStat = iota
	sysInterrupts
	sysLoadAvg
	sysPressure
	sysFiles
)

var dotPath = []byte(".\x00")

var sysNames = [sysFiles]string{"stat", "interrupts", "loadavg", "pressure/cpu"}

// Sampler produces Samples. It is not safe for concurrent use.
type Sampler struct {
	fs      procfs.FS
	rootFD  int
	sysFD   [sysFiles]int
	targets []int

	tasks, next, free           []*task
	procs, nextProcs, freeProcs []*proc
	pids, tids                  []int

	path, buf, dirBuf []byte
	intr              procfs.Interrupts

	// ts is the taskstats connection, nil when unavailable.
	ts *taskstatsConn
	// gateSkips counts processes skipped because they did not run.
	gateSkips uint64

	// keepBudget is how many schedstat fds may stay open: the soft
	// RLIMIT_NOFILE, raised to the hard limit, minus room for the rest of
	// the program.
	keepBudget, kept int
}

// New opens the procfs root and checks the targets exist.
func New(cfg Config) (*Sampler, error) {
	root := cfg.Root
	if root == "" {
		root = "/proc"
	}
	fs, err := procfs.NewFS(root)
	if err != nil {
		return nil, err
	}
	s := &Sampler{
		fs:     fs,
		rootFD: -1,
		buf:    make([]byte, 4096),
		dirBuf: make([]byte, 32<<10),
	}
	for i := range s.sysFD {
		s.sysFD[i] = -1
	}
	if s.rootFD, err = openat(unix.AT_FDCWD, cstr(nil, fs.Root()), unix.O_DIRECTORY); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", procfs.ErrNotProcfs, root, err)
	}
	for i, name := range sysNames {
		fd, err := openat(s.rootFD, cstr(nil, name), 0)
		if err != nil {
			if i == sysStat {
				s.Close()
				return nil, fmt.Errorf("%w: %s: %v", procfs.ErrNotProcfs, root, err)
			}
			continue // optional: older kernels, containers
		}
		s.sysFD[i] = fd
	}
	for _, pid := range cfg.PIDs {
		if pid <= 0 {
			s.Close()
			return nil, fmt.Errorf("invalid pid %d", pid)
		}
		s.path = append(appendInt(s.path[:0], pid), "/task\x00"...)
		fd, err := openat(s.rootFD, s.path, unix.O_DIRECTORY)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("no such process: %d", pid)
		}
		closeFD(fd)
	}
	s.targets = slices.Clone(cfg.PIDs)
	slices.Sort(s.targets)
	s.targets = slices.Compact(s.targets)
	s.keepBudget = fdBudget()
	if !cfg.NoTaskstats && sameNamespace(fs) {
		// Unavailable without CAP_NET_ADMIN, in a container's own network
		// namespace, or on kernels without it: then every thread is read.
		s.ts, _ = openTaskstats()
	}
	return s, nil
}

// sameNamespace reports whether root is the procfs of this process's own PID
// namespace, whose PIDs taskstats understands; not so for a fixture tree or
// another namespace's procfs mounted elsewhere.
func sameNamespace(fs procfs.FS) bool {
	self, err := os.Readlink(fs.Path("self"))
	return err == nil && self == strconv.Itoa(os.Getpid())
}

// TaskstatsGate reports whether the process-level activity gate is in use.
func (s *Sampler) TaskstatsGate() bool { return s.ts != nil }

// fdBudget raises the soft open-file limit to the hard one and returns how
// many fds the sampler may keep, leaving room for everything else.
func fdBudget() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if unix.Setrlimit(unix.RLIMIT_NOFILE, &raised) == nil {
			lim = raised
		}
	}
	const reserve = 256
	if lim.Cur > 1<<24 {
		lim.Cur = 1 << 24
	}
	if int(lim.Cur) <= 2*reserve {
		return int(lim.Cur) / 2
	}
	return int(lim.Cur) - reserve
}

// Close releases every file the sampler holds.
func (s *Sampler) Close() error {
	for _, t := range s.tasks {
		s.closeTask(t)
	}
	s.tasks = nil
	for _, p := range s.procs {
		if p.statFD >= 0 {
			closeFD(p.statFD)
		}
	}
	s.procs = nil
	for i, fd := range s.sysFD {
		if fd >= 0 {
			closeFD(fd)
			s.sysFD[i] = -1
		}
	}
	if s.rootFD >= 0 {
		closeFD(s.rootFD)
		s.rootFD = -1
	}
	if s.ts != nil {
		s.ts.close()
		s.ts = nil
	}
	return nil
}

// Sample makes one pass and writes it into dst, reusing dst.Tasks.
func (s *Sampler) Sample(dst *model.Sample) error {
	dst.Time = time.Now()
	if err := s.readSystem(&dst.System); err != nil {
		return err
	}
	dst.Unreadable = 0

	s.pids = s.pids[:0]
	if s.targets != nil {
		s.pids = append(s.pids, s.targets...)
	} else {
		var err error
		if s.pids, err = readDirInts(s.rootFD, dotPath, s.dirBuf, s.pids); err != nil {
			return fmt.Errorf("listing %s: %w", s.fs.Root(), err)
		}
		if !slices.IsSorted(s.pids) {
			slices.Sort(s.pids)
		}
	}

	old := s.tasks
	oi := 0
	s.next = s.next[:0]
	oldProcs := s.procs
	pi := 0
	s.nextProcs = s.nextProcs[:0]
	for _, pid := range s.pids {
		for pi < len(oldProcs) && oldProcs[pi].pid < pid {
			s.releaseProc(oldProcs[pi])
			pi++
		}
		var p *proc
		if pi < len(oldProcs) && oldProcs[pi].pid == pid {
			p = oldProcs[pi]
			pi++
		} else {
			p = s.allocProc(pid)
		}
		// Skip listing the task directory when the thread count is what we
		// saw last time and none of our threads vanished: getdents over a
		// 10,000-entry task directory costs as much as reading every one
		// of its threads.
		var err error
		skip := false
		if s.ts != nil && !p.mustList && p.threads >= gateMinThreads && p.gateWait > 0 {
			p.gateWait--
		} else if s.ts != nil && !p.mustList && p.threads >= gateMinThreads {
			act, qerr := s.ts.query(pid)
			switch {
			case qerr == nil:
				// Equal sums mean nothing in the process ran between the
				// two queries, so what we read after the earlier one is
				// still exact, however many passes ago that was.
				skip = p.gateValid && act == p.gate
				if skip {
					s.gateSkips++
					p.gateMisses = 0
				} else if p.gateValid {
					p.gateMisses = min(p.gateMisses+1, maxGateBackoff)
					p.gateWait = 1<<p.gateMisses - 1
				}
				p.gate, p.gateValid = act, true
			case isGone(qerr):
				s.releaseProc(p)
				continue
			default:
				s.ts.close()
				s.ts = nil
			}
		}
		list := !skip && (p.mustList || p.statFD < 0)
		if !list && !skip {
			var n int
			n, err = s.numThreads(p)
			list = err == nil && n != p.threads
		}
		if err == nil && list {
			s.path = append(appendInt(s.path[:0], pid), "/task\x00"...)
			s.tids, err = readDirInts(s.rootFD, s.path, s.dirBuf, s.tids[:0])
			if err == nil && !slices.IsSorted(s.tids) {
				slices.Sort(s.tids)
			}
		} else if err == nil {
			s.tids = s.tids[:0]
			for k := oi; k < len(old) && old[k].pid <= pid; k++ {
				if old[k].pid == pid {
					s.tids = append(s.tids, old[k].tid)
				}
			}
		}
		if err != nil {
			if !isGone(err) {
				dst.Unreadable++
			}
			s.releaseProc(p)
			continue
		}
		p.mustList = false
		group := len(s.next)
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
			if skip {
				// Nothing in this process ran since the last pass.
				s.next = append(s.next, t)
				continue
			}
			switch s.update(t) {
			case updated:
				s.next = append(s.next, t)
				continue
			case unreadable:
				dst.Unreadable++
			}
			// A thread we knew is gone, or was never readable: list the
			// directory afresh next time in case another took its place.
			p.mustList = true
			s.release(t)
		}
		p.threads = len(s.next) - group
		if p.threads == 0 {
			s.releaseProc(p)
			continue
		}
		s.nextProcs = append(s.nextProcs, p)
		s.setProcessComm(s.next[group:], pid)
	}
	for ; oi < len(old); oi++ {
		s.release(old[oi])
	}
	for ; pi < len(oldProcs); pi++ {
		s.releaseProc(oldProcs[pi])
	}
	s.tasks, s.next = s.next, old[:0]
	s.procs, s.nextProcs = s.nextProcs, oldProcs[:0]
	if s.targets != nil && !s.anyLive() {
		return ErrTargetsGone
	}

	dst.Tasks = dst.Tasks[:0]
	for _, t := range s.tasks {
		dst.Tasks = append(dst.Tasks, t.c)
	}
	dst.Self = selfUsage()
	return nil
}

// anyLive reports whether some target process is not a zombie: a killed
// target whose parent has not reaped it yet has exited all the same. The
// process's own stat is read afresh: a thread's cached state may predate
// its exit when it was last read on its way out.
func (s *Sampler) anyLive() bool {
	for _, p := range s.procs {
		if p.statFD < 0 {
			return true // cannot tell cheaply; it was listed, so keep going
		}
		n, err := readAll(p.statFD, &s.buf)
		if err != nil {
			continue
		}
		if st, err := procfs.ParseTaskStat(s.buf[:n], "stat"); err == nil && st.State != 'Z' && st.State != 'X' {
			return true
		}
	}
	return false
}

// setProcessComm gives every thread of a process the main thread's name.
func (s *Sampler) setProcessComm(group []*task, pid int) {
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

func (s *Sampler) allocProc(pid int) *proc {
	var p *proc
	if n := len(s.freeProcs); n > 0 {
		p, s.freeProcs = s.freeProcs[n-1], s.freeProcs[:n-1]
	} else {
		p = new(proc)
	}
	*p = proc{pid: pid, statFD: -1, mustList: true}
	if s.kept < s.keepBudget {
		s.path = append(appendInt(s.path[:0], pid), "/stat\x00"...)
		if fd, err := openat(s.rootFD, s.path, 0); err == nil {
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
	s.closeTask(t)
	s.free = append(s.free, t)
}

type outcome int

const (
	updated outcome = iota
	gone
	unreadable
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

// taskPath sets s.path to "PID/task/TID/<file>\0", relative to the root fd.
func (s *Sampler) taskPath(t *task, file string) {
	p := appendInt(s.path[:0], t.pid)
	p = append(p, "/task/"...)
	p = appendInt(p, t.tid)
	p = append(p, '/')
	p = append(p, file...)
	s.path = append(p, 0)
}

func (s *Sampler) readSystem(sys *model.SystemCounters) error {
	n, err := readAll(s.sysFD[sysStat], &s.buf)
	if err != nil {
		return fmt.Errorf("reading %s: %w", s.fs.Path("stat"), err)
	}
	st, err := procfs.ParseStat(s.buf[:n], "stat")
	if err != nil {
		return err
	}
	sys.ContextSwitches, sys.Interrupts = st.ContextSwitches, st.Interrupts
	sys.ProcsRunning, sys.ProcsBlocked = st.ProcsRunning, st.ProcsBlocked
	sys.CPUs = st.CPUs

	sys.ReschedIPIs = 0
	sys.ReschedPerCPU, sys.InterruptsPerCPU = sys.ReschedPerCPU[:0], sys.InterruptsPerCPU[:0]
	if fd := s.sysFD[sysInterrupts]; fd >= 0 {
		if n, err = readAll(fd, &s.buf); err == nil {
			err = procfs.ParseInterrupts(s.buf[:n], "interrupts", &s.intr)
		}
		if err == nil {
			sys.CPUs = s.intr.CPUs
			sys.ReschedIPIs = s.intr.ReschedIPIs
			sys.ReschedPerCPU = append(sys.ReschedPerCPU, s.intr.ReschedPerCPU...)
			sys.InterruptsPerCPU = append(sys.InterruptsPerCPU, s.intr.PerCPU...)
		}
	}
	sys.LoadAvg = [3]float64{}
	if fd := s.sysFD[sysLoadAvg]; fd >= 0 {
		if n, err = readAll(fd, &s.buf); err == nil {
			sys.LoadAvg, _ = procfs.ParseLoadAvg(s.buf[:n], "loadavg")
		}
	}
	sys.HasPSI, sys.PSICPUSomeAvg10 = false, 0
	sys.HasPSITotal, sys.PSICPUSomeTotalUs = false, 0
	if fd := s.sysFD[sysPressure]; fd >= 0 {
		if n, err = readAll(fd, &s.buf); err == nil {
			if v, err := procfs.ParsePressureCPUSome(s.buf[:n], "pressure/cpu"); err == nil {
				sys.HasPSI, sys.PSICPUSomeAvg10 = true, v.Avg10
				sys.HasPSITotal, sys.PSICPUSomeTotalUs = v.HasTotal, v.Total
			}
		}
	}
	return nil
}

func selfUsage() model.SelfCounters {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return model.SelfCounters{}
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return model.SelfCounters{CPUTime: cpu, VoluntarySwitches: uint64(ru.Nvcsw), InvoluntarySwitches: uint64(ru.Nivcsw)}
}

// isGone reports an error that means the task exited: normal life in /proc.
func isGone(err error) bool {
	return err == unix.ENOENT || err == unix.ESRCH || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

func classify(err error) outcome {
	if isGone(err) {
		return gone
	}
	return unreadable
}

func cstr(dst []byte, s string) []byte {
	return append(append(dst[:0], s...), 0)
}
