// Package sampler makes one pass over procfs per tick and produces a raw
// model.Sample. It keeps every thread's schedstat file open and re-reads it
// with pread: the third field (times scheduled in) only moves when the
// thread ran, so the costlier status and stat files are re-read only for
// threads that ran since the last pass. At 10,000 mostly idle threads that is
// the difference between ~110 ms and a few ms of CPU per refresh.
//
// The package is laid out by responsibility:
//
//	sampler.go   Config, New, Close and Sample, a pass in named phases
//	pass.go      one process per pass: the activity gate, which threads, reading them
//	pool.go      the task and process records kept between passes, recycled
//	task.go        per-thread reads: schedstat, status, stat
//	migrations.go  per-thread migrations, for threads that ran
//	readclock.go   when each task's counters were read
//	systemfiles.go system-wide counters: stat, interrupts, loadavg, pressure
//	errors.go      which errors are normal life in /proc and which count
//	rawcalls.go    raw syscalls over NUL-terminated paths
//	taskstats.go   the netlink activity gate
//	iter.go        the BPF task walk, which reads every thread in one call as root
//	cgroup.go      the cgroups tasks are in, and their CPU throttling
//	waitlooks.go   wait-reason looks at hot blocking threads between passes
//	waitlooks_api.go the looks as the live source drives them (WaitLooker)
package sampler

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/containers"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
)

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
	// CgroupRoot is a directory laid out like /sys/fs/cgroup whose cpu.stat
	// files to read; "" finds the mounts in Root's self/mountinfo when Root
	// is this process's own procfs, and reads none otherwise.
	CgroupRoot string
	// NoCgroups skips cgroups altogether: no /proc/PID/cgroup or cpu.stat
	// is read, and Sample.Cgroups and TaskCounters.Cgroup stay empty.
	NoCgroups bool
	// HostRoot is the root of the node's file system, under which the
	// kubelet's and the runtimes' files name containers and pods
	// (internal/containers); "" is "/".
	HostRoot string
	// NoContainers leaves cgroups unnamed: CgroupCounters.Container stays
	// nil.
	NoContainers bool
	// NoTaskIter keeps the /proc path even where the BPF task walk could
	// read every thread at once (iter.go).
	NoTaskIter bool
	// AfterRead, when set, is called once a pass, right after the tasks'
	// counters were read: right after the BPF walk, which reads them all
	// in one call, or after the last task on the /proc path. A reading
	// that must cover the same time as theirs (the wake-up tracer's, whose
	// rates stand beside the threads') belongs there rather than after
	// the pass, whose remaining work (listing /proc, the cgroups' files)
	// a busy host can stretch by whole time slices.
	AfterRead func()
	// Passes is how many passes the caller means to make, the baseline
	// included; 0 for as many as it lasts (the monitor, serve, a batch run
	// until interrupted). On a big host a caller that stays has the task
	// walk's skipping program loaded at once, in the background, rather
	// than when its passes have paid for it (taskiter.Options.Passes).
	Passes int
}

// Sampler produces Samples. It is not safe for concurrent use.
type Sampler struct {
	fs      procfs.FS
	rootFD  int
	sysFD   [sysFiles]int
	targets []int
	// skipped are the Config.PIDs already gone at New.
	skipped []int

	// tasks and procs are sorted by (pid, tid) and pid: what the last pass
	// found. A pass merges them with the fresh listing into next and
	// nextProcs, then swaps.
	tasks, next, free           []*task
	procs, nextProcs, freeProcs []*proc
	pids, tids                  []int
	// pass is the merge cursor into the previous pass's records.
	pass cursor

	path, buf, dirBuf []byte
	intr              procfs.Interrupts
	// taskDirFD is the task directory of process taskDirPID, open while a
	// pass reads its threads (taskPath): a thread's file is then two path
	// steps from it, not four from the root, which a first pass over
	// 10,000 threads and three files each feels. -1 when none is open.
	taskDirFD, taskDirPID int

	// ts is the taskstats connection, nil when unavailable.
	ts *taskstatsConn
	// gateSkips counts processes skipped because they did not run.
	gateSkips uint64

	// keepBudget is how many schedstat fds may stay open: the soft
	// RLIMIT_NOFILE, raised to the hard limit, minus room for the rest of
	// the program.
	keepBudget, kept int

	// cg tracks the cgroups the processes are in (cgroup.go), unless
	// noCgroups.
	cg        cgroups
	noCgroups bool

	// clock stamps each task's counters with when they were read (see
	// readclock.go).
	clock readClock
	// it is the BPF task walk when it reads the tasks instead of /proc
	// (iter.go); iterNote says why not, when it was asked for.
	it       *iterPath
	iterNote string

	// afterRead is Config.AfterRead; read is whether this pass called it.
	afterRead func()
	read      bool

	// listed is the last listing of the root directory, made when the
	// kernel's last PID handed out was listedPID; lastPID is this pass's
	// (loadavg's last field), tasksMade whether it was read. pidGate is
	// whether the two may be compared: the root is this process's own
	// procfs, whose PID namespace loadavg speaks of. listings counts the
	// listings made.
	listed             []int
	listedPID, lastPID uint64
	tasksMade, pidGate bool
	listedValid        bool
	listings           int

	// unreadable and live are readTasks's results: the files it could
	// not read, and whether a target process is still alive.
	unreadable int
	live       bool

	// procPass counts the /proc path's passes; a task's touched is the
	// last one that changed a field of its counters other than ReadAt.
	// listChanged says this pass found a task come or go. exportedSeq
	// and exportedPass are the Seq and pass of the last Sample exported:
	// the next one names it in SameTasksAs when the list held, so that
	// the model visits only the tasks that moved (model.Sample.Moved).
	procPass, exportedPass uint64
	exportedSeq            uint64
	listChanged            bool
	// listGen counts the /proc passes that found a task come or go, and
	// filled is the Tasks arrays the last exports wrote (export): an
	// array that still holds what a pass of the same listGen put there
	// needs only the tasks touched since, and every task's ReadAt.
	listGen uint64
	filled  [2]filledTasks
	// fresh counts the task records begun afresh (alloc, or a TID found
	// reused): one with no process name or cgroup given yet.
	fresh uint64
}

// filledTasks is a Tasks array export wrote: its first element, its
// length, the Seq of the Sample it went out in, and the pass and listGen
// it was written in.
type filledTasks struct {
	first     *model.TaskCounters
	n         int
	seq       uint64
	pass, gen uint64
}

var dotPath = []byte(".\x00")

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
		fs:        fs,
		rootFD:    -1,
		taskDirFD: -1,
		buf:       make([]byte, 4096),
		dirBuf:    make([]byte, 32<<10),
		afterRead: cfg.AfterRead,
	}
	for i := range s.sysFD {
		s.sysFD[i] = -1
	}
	if s.rootFD, err = openat(unix.AT_FDCWD, cstr(nil, fs.Root()), unix.O_DIRECTORY); err != nil {
		return nil, &procfs.RootError{Root: root, Problem: err.Error()}
	}
	if err := s.openSystem(); err != nil {
		s.Close()
		return nil, err
	}
	// A target already gone is skipped while another remains, as pidstat
	// does: -p $(pgrep -d, java) races with the processes it lists.
	for _, pid := range cfg.PIDs {
		if pid <= 0 {
			s.Close()
			return nil, fmt.Errorf("invalid pid %d", pid)
		}
		s.path = append(appendInt(s.path[:0], pid), "/task\x00"...)
		fd, err := openDir(s.rootFD, s.path)
		if err != nil {
			if !slices.Contains(s.skipped, pid) {
				s.skipped = append(s.skipped, pid)
			}
			continue
		}
		closeFD(fd)
		s.targets = append(s.targets, pid)
	}
	if len(cfg.PIDs) > 0 && len(s.targets) == 0 {
		s.Close()
		return nil, fmt.Errorf("%w: %s", ErrNoSuchProcess, joinInts(s.skipped))
	}
	slices.Sort(s.targets)
	s.targets = slices.Compact(s.targets)
	s.keepBudget = fdBudget()
	s.pidGate = sameNamespace(fs)
	if !cfg.NoTaskIter {
		s.it, s.iterNote = openIter(fs, s.targets, cfg.NoTaskstats, cfg.Passes)
	}
	if s.it == nil && !cfg.NoTaskstats && sameNamespace(fs) {
		// Unavailable without CAP_NET_ADMIN, in a container's own network
		// namespace, or on kernels without it: then every thread is read.
		s.ts, _ = openTaskstats()
	}
	s.noCgroups = cfg.NoCgroups
	if !s.noCgroups {
		var r *containers.Resolver
		if !cfg.NoContainers {
			r = containers.New(cfg.HostRoot)
		}
		s.cg = newCgroups(fs, cfg.CgroupRoot, r)
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

// Skipped lists the processes given in Config.PIDs that were already gone
// when the sampler opened, in the order given; the others are sampled.
func (s *Sampler) Skipped() []int { return s.skipped }

// joinInts is "1, 2, 3".
func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
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
	s.closeTasks()
	s.closeSystem()
	s.closeIter()
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

// closeTasks closes the files the passes opened for the tasks and
// processes.
func (s *Sampler) closeTasks() {
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
	s.closeTaskDir()
}

// Sample makes one pass and writes it into dst, reusing dst.Tasks.
func (s *Sampler) Sample(dst *model.Sample) error {
	s.read = false
	dst.Time = time.Now()
	s.clock.start(dst.Time)
	s.readSystem(&dst.System)
	if s.it != nil {
		if err := s.sampleIter(dst); err != errFellBack {
			return err
		}
	}
	if err := s.readTasks(); err != nil {
		return err
	}
	dst.Unreadable = s.unreadable
	s.tasksRead()
	if !s.live {
		return ErrTargetsGone
	}
	s.export(dst)
	if s.noCgroups {
		dst.Cgroups = dst.Cgroups[:0]
	} else {
		s.readCgroups(dst)
	}
	return nil
}

// readTasks is the /proc path's pass over the tasks: it lists them, reads
// each, and, with targets, checks that one is still alive.
func (s *Sampler) readTasks() error {
	if err := s.listProcesses(); err != nil {
		return err
	}
	s.unreadable = 0
	s.procPass++
	s.listChanged = false
	s.beginPass()
	for _, pid := range s.pids {
		s.unreadable += s.sampleProcess(s.carryProc(pid))
	}
	s.endPass()
	if s.listChanged {
		s.listGen++
	}
	s.live = s.targets == nil || s.anyLive()
	return nil
}

// tasksRead calls Config.AfterRead, once a pass: a walk that fails after
// it read the tasks falls back to the /proc path, which reads them again.
func (s *Sampler) tasksRead() {
	if s.afterRead != nil && !s.read {
		s.read = true
		s.afterRead()
	}
}

// listProcesses sets s.pids, sorted: the targets, or every process in the
// root directory.
func (s *Sampler) listProcesses() error {
	s.pids = s.pids[:0]
	if s.targets != nil {
		s.pids = append(s.pids, s.targets...)
		return nil
	}
	// Every new process takes a new PID, and the kernel's last one is in
	// loadavg: while it stays, a listing would find the processes of the
	// last one, less those that exited, whose reads say so. Listing walks
	// every thread's PID in the kernel (0.3 ms at 10,000 threads, 3 at
	// 100,000), which a quiet host's passes skip. Only pid_max new tasks
	// within one interval, landing on the same last PID, would go unseen.
	if s.pidGate && s.tasksMade && s.listedValid && s.lastPID == s.listedPID {
		s.pids = append(s.pids, s.listed...)
		return nil
	}
	var err error
	if s.pids, err = readDirInts(s.rootFD, dotPath, s.dirBuf, s.pids); err != nil {
		s.listedValid = false
		return fmt.Errorf("listing %s: %w", s.fs.Root(), err)
	}
	if !slices.IsSorted(s.pids) {
		slices.Sort(s.pids)
	}
	s.listings++
	s.listed = append(s.listed[:0], s.pids...)
	s.listedPID, s.listedValid = s.lastPID, s.tasksMade
	return nil
}

// taskRoom empties tasks with room for n. A list that must grow grows by a
// quarter more than n: grown to fit exactly, it was reallocated whenever
// the host gained a few threads, both samples in turn (some 4 MB each at
// 20,000 threads), and the pass that did it faulted in the pages the
// collector and the scavenger had returned to the OS since the last time:
// 800-1,400 faults, 2-5 times a steady pass.
func taskRoom(tasks []model.TaskCounters, n int) []model.TaskCounters {
	if cap(tasks) >= n {
		return tasks[:0]
	}
	return slices.Grow(tasks[:0], n+n/4)
}

// export copies the pass's counters into dst and, when the pass found the
// last exported one's tasks, no more and no fewer, says which moved.
//
// The caller hands the sampler two Samples in turn, so dst most often
// holds what the pass before last wrote into it. When it still does (the
// same array, length and Seq, and no task came or went since), only the
// tasks touched since then are copied whole, and every other one gets its
// new ReadAt: at 10,000 idle threads that is 10,000 168-byte copies fewer
// a pass. Only the sampler writes the elements of Tasks (model.Sample), so
// an unchanged Seq vouches for them.
func (s *Sampler) export(dst *model.Sample) {
	n := len(s.tasks)
	// filledSince wants dst's length to be n, so its array has room and
	// taskRoom keeps it, contents and all.
	since, ok := s.filledSince(dst, n)
	dst.Tasks = taskRoom(dst.Tasks, n)[:n]
	same := s.exportedSeq != 0 && s.exportedPass == s.procPass-1 && !s.listChanged
	dst.Moved = dst.Moved[:0]
	for i, t := range s.tasks {
		d := &dst.Tasks[i]
		if !ok || t.touched > since {
			*d = t.c
		} else {
			d.ReadAt = t.c.ReadAt
		}
		if same && t.touched == s.procPass {
			dst.Moved = append(dst.Moved, int32(i))
		}
	}
	dst.Seq, dst.SameTasksAs = model.NextSeq(), 0
	if same {
		dst.SameTasksAs = s.exportedSeq
	}
	s.exportedSeq, s.exportedPass = dst.Seq, s.procPass
	s.noteFilled(dst)
	dst.Self = selfUsage()
	dst.Source = SourceProc
}

// filledSince reports whether dst's n tasks are what a /proc pass of this
// listGen exported into it, untouched since, and which pass that was.
func (s *Sampler) filledSince(dst *model.Sample, n int) (pass uint64, ok bool) {
	if n == 0 || len(dst.Tasks) != n || dst.Seq == 0 {
		return 0, false
	}
	for _, f := range s.filled {
		if f.first == &dst.Tasks[0] && f.n == n && f.seq == dst.Seq && f.gen == s.listGen {
			return f.pass, true
		}
	}
	return 0, false
}

// noteFilled remembers the array export just wrote, in place of any other
// note of it (it holds this pass now) or else of the older note.
func (s *Sampler) noteFilled(dst *model.Sample) {
	f := filledTasks{n: len(dst.Tasks), seq: dst.Seq, pass: s.procPass, gen: s.listGen}
	if f.n > 0 {
		f.first = &dst.Tasks[0]
	}
	k := 0
	if s.filled[0].first != f.first && (s.filled[1].first == f.first || s.filled[1].pass < s.filled[0].pass) {
		k = 1
	}
	s.filled[k] = f
}

// anyLive reports whether some target process is not a zombie: a killed
// target whose parent has not reaped it yet has exited all the same. The
// main thread's stat is read afresh (its state is the process's state in
// /proc/PID/stat too): a thread's cached state may predate its exit when it
// was last read on its way out.
func (s *Sampler) anyLive() bool {
	for _, p := range s.procs {
		if p.statFD < 0 {
			return true // cannot tell cheaply; it was listed, so keep going
		}
		n, err := readAll(p.statFD, &s.buf, procfs.LimitLine)
		if err != nil {
			continue
		}
		if st, err := procfs.ParseTaskStat(s.buf[:n], "stat"); err == nil && st.State != 'Z' && st.State != 'X' {
			return true
		}
	}
	return false
}

func selfUsage() model.SelfCounters {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return model.SelfCounters{}
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return model.SelfCounters{CPUTime: cpu, VoluntarySwitches: uint64(ru.Nvcsw), InvoluntarySwitches: uint64(ru.Nivcsw)}
}

func cstr(dst []byte, s string) []byte {
	return append(append(dst[:0], s...), 0)
}
