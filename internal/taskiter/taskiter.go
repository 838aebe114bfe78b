// Package taskiter reads every thread's scheduler counters in one pass
// with a BPF task iterator: a program walks the kernel's tasks and writes
// one fixed binary record per thread into an array mapped into this
// process (bpf/taskiter.bpf.c), so a pass costs one syscall instead of a
// pread per thread of /proc/PID/task/TID/schedstat, status and stat.
//
// A record holds what those files would give for the thread: the switch
// counts (nvcsw, nivcsw), schedstat's run time, run-queue wait and
// timeslices, the CPU it last ran on, its state, start time, name and CPU
// affinity, read from the same task_struct fields /proc formats.
package taskiter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/procfs"
)

// ErrUnavailable wraps every reason the iterator cannot run here; its
// message says what is missing, in one line.
var ErrUnavailable = errors.New("BPF task iterator unavailable")

// object is the program as the binary embeds it.
var object = bpfutil.Object{Unavailable: ErrUnavailable, Bytes: _TaskiterBytes,
	Kernel: "open-coded task iterators need Linux 6.7 or later", Host: bpfutil.Host()}

// Check reports, without loading anything, why the iterator cannot run
// (see bpfutil.Needs.Check), in one line wrapping ErrUnavailable.
func Check() error { return object.Check() }

// Options selects what a pass reports.
type Options struct {
	// PIDs limits a pass to these processes' threads; nil reports all.
	PIDs []int
	// SkipAbove is how many threads a walk must find for the walks
	// after it to attach the wake-up hooks and step over the processes
	// nobody woke (see skip.go): 0 means DefaultSkipAbove, a negative
	// number never.
	SkipAbove int
	// Passes is how many walks the caller means to make, 0 for as many
	// as it lasts (a monitor): on a host of SkipAbove threads or more,
	// one that makes enough to win back the skipping walk's load has it
	// loaded from Open on, in the background (see loadNs).
	Passes int
}

// Iter is the loaded walk program and the array it writes, mapped.
type Iter struct {
	opts Options
	objs walkObjects
	// spec is the object as last loaded (sizes and variables set), for
	// loading progs, the skipping walk, later over the same maps.
	spec  *ebpf.CollectionSpec
	progs skipPrograms
	// retired is the run count and time of walk programs closed since
	// (a reload), so that Stats never goes back.
	retired   ebpf.ProgramStats
	recs      []byte // the mapped array: capacity records of size bytes
	capacity  int
	size      int
	maskWords int
	ncpu      int
	hz        uint64
	// run is the walk's BPF_PROG_TEST_RUN attributes (runProgram), kept
	// so that a pass allocates none.
	run progRunAttr
	// types holds the kernel's BTF, parsed once (some 30 ms): the
	// program's CO-RE relocations and its kfunc calls (the open-coded
	// iterator) are both resolved against it, and a grown array reloads
	// the program, which needs it again. Without one cache the kfunc fixup
	// parsed the whole of vmlinux a second time.
	types *btf.Cache
	// changed is the mapped list of the records the last walk wrote:
	// capacity+1 words of 8 bytes, a count and then indices.
	changed []byte
	// ctl is the mapped control element (struct walk_ctl), wakes the
	// hooks' per-CPU run counts, a cache line each, moves the list of
	// the records the last walk moved (struct move).
	ctl, wakes, moves []byte
	skip              skipState
	// ranFull is whether the last walk visited every process.
	ranFull bool
	// walked is set once a walk has been made.
	walked bool
}

// walkObjects is what a pass needs of the object at first: the maps and
// the plain walk. The skipping walk and its hooks (skipPrograms) are
// loaded only when the hooks are to be attached.
type walkObjects struct {
	All       *ebpf.Program `ebpf:"ctxtop_walk_all"`
	Recs      *ebpf.Map     `ebpf:"recs"`
	Changed   *ebpf.Map     `ebpf:"changed"`
	Targets   *ebpf.Map     `ebpf:"targets"`
	Control   *ebpf.Map     `ebpf:"control"`
	Dirty     *ebpf.Map     `ebpf:"dirty"`
	DirtyTIDs *ebpf.Map     `ebpf:"dirty_tids"`
	Spans     *ebpf.Map     `ebpf:"spans"`
	Wakeups   *ebpf.Map     `ebpf:"wakeups"`
	Scratch   *ebpf.Map     `ebpf:"scratch"`
	Moves     *ebpf.Map     `ebpf:"moves"`
}

func (o *walkObjects) Close() error {
	var errs []error
	if o.All != nil {
		errs = append(errs, o.All.Close())
	}
	for _, m := range []*ebpf.Map{o.Recs, o.Changed, o.Targets, o.Control, o.Dirty, o.DirtyTIDs, o.Spans, o.Wakeups, o.Scratch, o.Moves} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	*o = walkObjects{}
	return errors.Join(errs...)
}

// skipPrograms are the skipping walk and the hooks that mark for it.
type skipPrograms struct {
	Walk      *ebpf.Program `ebpf:"ctxtop_walk"`
	Wakeup    *ebpf.Program `ebpf:"ctxtop_wakeup"`
	WakeupNew *ebpf.Program `ebpf:"ctxtop_wakeup_new"`
}

func (o *skipPrograms) Close() error {
	var errs []error
	for _, p := range []*ebpf.Program{o.Walk, o.Wakeup, o.WakeupNew} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	*o = skipPrograms{}
	return errors.Join(errs...)
}

// minCapacity is the array's least size in records; it grows to fit.
const minCapacity = 4096

// hostThreads is how many threads the host runs now, by which Open sizes
// the array, with room to grow, so that a start does not load the program
// twice (and throw away the skipping walk loading beside it): the
// kernel's count in /proc/loadavg (procfs.ParseLoadAvgThreads), or
// sysinfo(2)'s where that cannot be read, which counts in 16 bits and so
// wraps past 65,535.
func hostThreads() int {
	if b, err := procfs.ReadFile("/proc/loadavg", procfs.LimitLine); err == nil {
		if n, ok := procfs.ParseLoadAvgThreads(b); ok {
			return n
		}
	}
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return 0
	}
	return int(si.Procs)
}

// Open loads the program and maps its array. Its errors wrap
// ErrUnavailable and fit on one line.
func Open(opts Options) (*Iter, error) {
	if err := object.Host.Prepare(); err != nil {
		return nil, object.Wrap(err)
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, object.Wrap(err)
	}
	words := (ncpu + 63) / 64
	if words > MaxMaskWords {
		return nil, fmt.Errorf("%w: %d possible CPUs, the program copies affinity masks of up to %d", ErrUnavailable, ncpu, MaxMaskWords*64)
	}
	it := &Iter{opts: opts, maskWords: words, size: recordSize(words), ncpu: ncpu, hz: clockTicks(), types: btf.NewCache(), ranFull: true}
	switch {
	case opts.SkipAbove == 0:
		it.skip.above = DefaultSkipAbove
	case opts.SkipAbove > 0:
		it.skip.above = opts.SkipAbove
	}
	threads := hostThreads()
	if err := it.load(max(threads+threads/4+1024, minCapacity)); err != nil {
		return nil, err
	}
	if it.preloads(threads, opts.Passes) {
		it.attachEarly()
		it.startLoad()
		// As if paid: a reload of the maps (a grown array) loads it
		// again at once.
		it.skip.preload, it.skip.stepped, it.skip.wait = true, loadNs, preloadWait
	}
	return it, nil
}

// load loads the program with an array of capacity records and maps it.
func (it *Iter) load(capacity int) error {
	// The skipping walk loading in the background is over the maps this
	// replaces: it would have to be loaded again.
	it.discardLoad()
	// Open ran the prelude's checks (object.Spec); a reload for a grown
	// array, within a walk, repeats none of them.
	spec, err := bpfutil.Spec(object.Bytes)
	if err != nil {
		return object.Wrap(err)
	}
	if err := spec.Variables[taskiterVarMaskWords].Set(uint32(it.maskWords)); err != nil {
		return object.Wrap(err)
	}
	if err := spec.Variables[taskiterVarFilterTgid].Set(it.opts.PIDs != nil); err != nil {
		return object.Wrap(err)
	}
	spec.Maps[taskiterMapRecs].ValueSize = uint32(it.size)
	spec.Maps[taskiterMapRecs].MaxEntries = uint32(capacity)
	spec.Maps[taskiterMapChanged].MaxEntries = uint32(capacity + 1)
	spec.Maps[taskiterMapSpans].MaxEntries = uint32(capacity)
	spec.Maps[taskiterMapDirty].MaxEntries = uint32((pidMax() + 63) / 64)
	spec.Maps[taskiterMapDirtyTids].MaxEntries = spec.Maps[taskiterMapDirty].MaxEntries
	spec.Maps[taskiterMapWakeups].MaxEntries = uint32(it.ncpu)
	if m := spec.Maps[taskiterMapControl]; m.ValueSize != ctlSize || spec.Maps[taskiterMapWakeups].ValueSize != wakeCountSize || spec.Maps[taskiterMapMoves].ValueSize != moveSize {
		return fmt.Errorf("%w: the program's control element is %d bytes, Go expects %d", ErrUnavailable, m.ValueSize, ctlSize)
	}
	if it.opts.PIDs != nil {
		spec.Maps[taskiterMapTargets].MaxEntries = uint32(max(len(it.opts.PIDs), 1))
	}
	kernel, err := it.types.Kernel()
	if err != nil {
		return fmt.Errorf("%w: reading the kernel's BTF: %v", ErrUnavailable, err)
	}
	it.spec = spec
	var objs walkObjects
	// KernelTypes as well as the cache: without it the relocations would
	// also read every kernel module's BTF, which the program never names.
	opts := &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: kernel}, Cache: it.types}
	if err := object.Load(spec, &objs, opts); err != nil {
		return err
	}
	for _, pid := range it.opts.PIDs {
		if err := objs.Targets.Put(uint32(pid), uint8(1)); err != nil {
			objs.Close()
			return object.Wrap(err)
		}
	}
	// The array is read in place: a pass copies nothing but what the
	// caller keeps.
	recs, err := unix.Mmap(objs.Recs.FD(), 0, capacity*it.size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		objs.Close()
		return fmt.Errorf("%w: mapping the record array: %v", ErrUnavailable, err)
	}
	changed, err := unix.Mmap(objs.Changed.FD(), 0, (capacity+1)*changedWord, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(recs)
		objs.Close()
		return fmt.Errorf("%w: mapping the changed list: %v", ErrUnavailable, err)
	}
	ctl, err := unix.Mmap(objs.Control.FD(), 0, ctlSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(recs)
		unix.Munmap(changed)
		objs.Close()
		return fmt.Errorf("%w: mapping the walk's control: %v", ErrUnavailable, err)
	}
	wakes, err := unix.Mmap(objs.Wakeups.FD(), 0, it.ncpu*wakeCountSize, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(recs)
		unix.Munmap(changed)
		unix.Munmap(ctl)
		objs.Close()
		return fmt.Errorf("%w: mapping the wake-up counts: %v", ErrUnavailable, err)
	}
	moves, err := unix.Mmap(objs.Moves.FD(), 0, int(objs.Moves.MaxEntries())*moveSize, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		unix.Munmap(recs)
		unix.Munmap(changed)
		unix.Munmap(ctl)
		unix.Munmap(wakes)
		objs.Close()
		return fmt.Errorf("%w: mapping the moves list: %v", ErrUnavailable, err)
	}
	// New programs: the hooks, if any, were the old ones', and the new
	// bitmap knows nothing yet.
	it.release()
	it.objs, it.recs, it.changed, it.capacity = objs, recs, changed, capacity
	it.ctl, it.wakes, it.moves = ctl, wakes, moves
	it.skip.misses, it.skip.wakes = 0, 0
	return nil
}

// release unmaps the array and frees the program and maps.
func (it *Iter) release() error {
	it.discardLoad()
	var errs []error
	if it.recs != nil {
		errs = append(errs, unix.Munmap(it.recs))
		it.recs = nil
	}
	if it.changed != nil {
		errs = append(errs, unix.Munmap(it.changed))
		it.changed = nil
	}
	for _, m := range []*[]byte{&it.ctl, &it.wakes, &it.moves} {
		if *m != nil {
			errs = append(errs, unix.Munmap(*m))
			*m = nil
		}
	}
	it.detach()
	for _, p := range []*ebpf.Program{it.objs.All, it.progs.Walk} {
		if p == nil {
			continue
		}
		if st, err := p.Stats(); err == nil {
			it.retired.RunCount += st.RunCount
			it.retired.Runtime += st.Runtime
		}
	}
	errs = append(errs, it.progs.Close(), it.objs.Close())
	return errors.Join(errs...)
}

// Close frees the program, its maps and the mapping. It is safe to call
// more than once.
func (it *Iter) Close() error {
	if it == nil {
		return nil
	}
	return it.release()
}

// CPUs is how many CPUs a Record's Mask describes: the possible CPUs.
func (it *Iter) CPUs() int { return it.ncpu }

// StartTicks converts a Record's StartNs to stat's field 22: clock ticks
// since boot, as nsec_to_clock_t computes them.
func (it *Iter) StartTicks(ns uint64) uint64 {
	if 1_000_000_000%it.hz == 0 {
		return ns / (1_000_000_000 / it.hz)
	}
	return ns * 9 / ((9*1_000_000_000 + it.hz/2) / it.hz)
}

// maxGrowths bounds the retries of a pass that finds more threads than the
// array holds: threads are being born faster than the array grows.
const maxGrowths = 3

// Walk runs one walk and returns how many threads it found, a record
// each: processes in creation order and each one's threads in creation
// order. Record reads them until the next walk; Changed says which of them
// this walk wrote.
func (it *Iter) Walk() (int, error) {
	first := !it.walked
	n, err := it.walk()
	if err == nil && first && it.skip.hooks != nil {
		// The first walk writes every record, and the skipping walk
		// marks a thread whose record it wrote to be read again: the
		// second pass would look every thread up by TID, dearer than
		// visiting them (4 ms against 1 at 10,000 threads). Walked
		// again at once, in full, it finds the records as written and
		// clears those marks; the caller reads every record of a first
		// walk anyway, whatever Changed lists.
		n, err = it.again()
	}
	if err != nil {
		it.skip.full = true
		return 0, err
	}
	it.walked = true
	it.account(n)
	return n, nil
}

// Changed appends to dst the indices, in increasing order, of the records
// the last walk, which found n threads, wrote. Every other record below n
// is as the walk before left it and stands for the same thread, whose
// counters have not moved, at the same place or at the place a Move says
// it came from: a thread born or gone shifts the records after it, and they
// are moved or written afresh, as are all of them after the array grew.
// The list is checked, never trusted: a count or index out of order or
// range is ErrRecord.
func (it *Iter) Changed(dst []int32, n int) ([]int32, error) {
	le := binary.LittleEndian
	d := le.Uint64(it.changed)
	if d > uint64(n) || n > it.capacity {
		return dst, fmt.Errorf("%w: %d records changed of %d", ErrRecord, d, n)
	}
	next := uint64(0) // the least index the next entry may hold
	for k := 1; k <= int(d); k++ {
		i := le.Uint64(it.changed[k*changedWord:])
		if i < next || i >= uint64(n) {
			return dst, fmt.Errorf("%w: changed record %d of %d out of order", ErrRecord, i, n)
		}
		next = i + 1
		dst = append(dst, int32(i))
	}
	return dst, nil
}

// Move is a run of records the last walk took from the walk before's
// positions Src to Src+Count-1 and put, unchanged, at Dst to Dst+Count-1:
// the same threads, shifted down because threads or processes before them
// in the walk have gone, or up because threads were born before them.
type Move struct {
	Dst, Src, Count int
}

// Moves appends to dst the runs of records the last walk, which found n
// threads, moved, in increasing order; the walk before found prev. The list
// is checked, never trusted: runs that overlap, stay put or go out of range are
// ErrRecord. A record both moved and listed by Changed was moved and then
// rewritten.
func (it *Iter) Moves(dst []Move, n, prev int) ([]Move, error) {
	le := binary.LittleEndian
	k := int(le.Uint32(it.ctl[ctlMoves:]))
	if k*moveSize > len(it.moves) {
		return dst, fmt.Errorf("%w: %d moves", ErrRecord, k)
	}
	end := 0 // the least Dst the next run may have
	src := 0 // and Src
	for j := range k {
		b := it.moves[j*moveSize:]
		m := Move{Dst: int(le.Uint32(b)), Src: int(le.Uint32(b[4:])), Count: int(le.Uint32(b[8:]))}
		if m.Count <= 0 || m.Dst < end || m.Src < src || m.Dst == m.Src || m.Dst+m.Count > n || m.Src+m.Count > prev {
			return dst, fmt.Errorf("%w: move of %d records from %d to %d, of %d and %d", ErrRecord, m.Count, m.Src, m.Dst, prev, n)
		}
		end, src = m.Dst+m.Count, m.Src+m.Count
		dst = append(dst, m)
	}
	return dst, nil
}

// Stats is the walk programs' run count and time, which the kernel keeps
// while BPF statistics are enabled (ebpf.EnableStats), since Open.
func (it *Iter) Stats() (*ebpf.ProgramStats, error) {
	sum := it.retired
	for _, p := range []*ebpf.Program{it.objs.All, it.progs.Walk} {
		if p == nil {
			continue
		}
		st, err := p.Stats()
		if err != nil {
			return nil, err
		}
		sum.RunCount += st.RunCount
		sum.Runtime += st.Runtime
	}
	return &sum, nil
}

// Record decodes the i-th record of the last walk into r.
func (it *Iter) Record(i int, r *Record) error {
	if i < 0 || i >= it.capacity {
		return fmt.Errorf("%w: record %d of %d", ErrRecord, i, it.capacity)
	}
	return decode(it.recs[i*it.size:(i+1)*it.size], it.maskWords, r)
}

// walk runs the program until the array holds every thread it found, and
// returns how many that is.
func (it *Iter) walk() (int, error) {
	for range maxGrowths + 1 {
		it.steer()
		ret, err := it.runProgram(it.program())
		if err != nil {
			return 0, fmt.Errorf("running the task walk: %w", err)
		}
		n := int(ret)
		if n <= it.capacity {
			return n, nil
		}
		if n >= maxID {
			return 0, fmt.Errorf("%w: %d threads", ErrRecord, n)
		}
		// Room for a quarter more, so a growing pool does not reload
		// the program at every pass.
		if err := it.load(n + n/4 + 1024); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("threads are starting faster than the task array grows (%d)", it.capacity)
}

// again runs the last walk's program once more, as steer set it up (a
// full walk, after the first); a walk that no longer fits the array is
// made anew, growing it.
func (it *Iter) again() (int, error) {
	ret, err := it.runProgram(it.program())
	if err != nil {
		return 0, fmt.Errorf("running the task walk: %w", err)
	}
	if n := int(ret); n <= it.capacity {
		return n, nil
	}
	return it.walk()
}

// progRunAttr is the kernel's bpf_attr for BPF_PROG_TEST_RUN (80 bytes,
// as cilium/ebpf sends it): a program run once without input sets the
// program and reads the return value; the rest stays zero.
type progRunAttr struct {
	progFD, retval uint32
	_              [18]uint32 // data, repeat, duration, ctx, flags, cpu, batch size
}

// runProgram runs prog once and returns what it returned. By a raw
// system call, not Program.Run: that one is announced to the Go scheduler,
// and the first such call after the process was idle (a monitor between
// refreshes) wakes the runtime's sysmon thread, which then polls every
// 20 µs until the process goes idle again: some 50 wake-ups of another
// thread in each refresh (strace), each a context switch the monitor
// caused, and the CPU time of each counted in the pass, ms of it where
// sysmon woke on the pass's CPU and preempted it. A raw call leaves sysmon
// asleep, as the /proc path's reads do. The walk does not sleep in the
// kernel; it holds its P from the scheduler for as long as it runs, a few
// ms, some 20 at 100,000 threads. EINTR, which the walk's program type
// never returns, would mean it ran once all the same, as Program.Run has
// it.
func (it *Iter) runProgram(prog *ebpf.Program) (uint32, error) {
	it.run = progRunAttr{progFD: uint32(prog.FD())}
	_, _, e := unix.RawSyscall(unix.SYS_BPF, unix.BPF_PROG_TEST_RUN, uintptr(unsafe.Pointer(&it.run)), unsafe.Sizeof(it.run))
	runtime.KeepAlive(prog)
	if e != 0 && e != unix.EINTR {
		return 0, e
	}
	return it.run.retval, nil
}

// program is the walk steer chose: the skipping one once it is loaded
// and the hooks are on, the plain one until then.
func (it *Iter) program() *ebpf.Program {
	if it.skip.hooks != nil && it.progs.Walk != nil {
		return it.progs.Walk
	}
	return it.objs.All
}

// clockTicks is USER_HZ, the unit of stat's time fields, from the ELF
// auxiliary vector (AT_CLKTCK); 100 where it cannot be read.
func clockTicks() uint64 {
	const atClkTck = 17
	if auxv, err := unix.Auxv(); err == nil {
		for _, kv := range auxv {
			if kv[0] == atClkTck && kv[1] > 0 {
				return uint64(kv[1])
			}
		}
	}
	return 100
}
