// Package waketrace measures who wakes whom with eBPF programs on the
// scheduler's tracepoints. The kernel aggregates: per (waker, wakee) thread
// pair a wake-up count, a cross-CPU count and a log2 wake-to-run latency
// histogram, from one program on sched_waking; and, only while asked for
// (SetPerCPU), per CPU the context switches and migrations, from programs
// on sched_switch and sched_migrate_task. User space reads the maps once
// per refresh; no event is sent to user space.
package waketrace

import (
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/model"
)

// PairMapSize is how many distinct (waker, wakee) pairs the kernel counts
// between two reads (MAX_PAIRS in the BPF source). Each read empties the
// map; wake-ups of further pairs in the same interval are counted as
// dropped. At about 250 bytes an entry the map takes about 4 MiB.
const PairMapSize = 16384

// NoteSlots is the size of the kernel's table of wakees (NOTE_SLOTS in the
// BPF source): each wakee has a 256-byte slot chosen by a hash of its
// thread ID, holding the note of its latest wake-up until its next one
// resolves it, and the wakee's pair counts until they reach the pair map
// (4 MiB in all). Two wakees sharing a slot take it from each other: the
// note of the one that lost it goes unresolved (its wake-up stays counted).
const NoteSlots = 16384

// The pair map's keys for wakers that are no thread (WAKER_* in the BPF
// source): wake-ups in a hard interrupt, in a softirq, or by a timer's
// callback in either; and the idle task, keyed by CPU.
const (
	keyIRQ     = 0xfffffff1
	keySoftIRQ = 0xfffffff2
	keyTimer   = 0xfffffff3
	keyIdle    = 0x80000000
)

// ErrUnavailable wraps every reason the programs cannot run here; its
// message says what is missing and how to get it, in one line.
var ErrUnavailable = errors.New("wake-ups unavailable")

// object is the programs as the binary embeds them; its Host is what a
// test pretends the host is.
var object = bpfutil.Object{Unavailable: ErrUnavailable, Bytes: _WaketraceBytes,
	Kernel: "BTF tracepoint programs need Linux 5.5 or later", Host: bpfutil.Host()}

// Check reports, without loading anything, why the tracer cannot run (see
// bpfutil.Needs.Check), in one line wrapping ErrUnavailable.
func Check() error { return object.Check() }

// Tracer is the loaded and attached programs and their maps.
type Tracer struct {
	objs waketraceObjects
	// The programs' links while attached: waking always, sw while timing
	// or counting per CPU, migrate while counting per CPU.
	waking, sw, migrate *bpfutil.RawLink
	// What SetPerCPU and TimeLatencies asked for.
	perCPU, timing bool

	// Buffers for the batch reads, kept so a read allocates only for the
	// pairs it returns.
	keys   []waketracePairKey
	vals   []waketracePair
	cpuIDs []uint32
	cpus   []waketraceCpuStats
	// cursor is where a batch read stopped: a hash map's bucket (4 bytes),
	// an array's key (4 bytes here).
	cursor [8]byte
}

// batch is how many pairs one batch syscall returns; a hash bucket never
// holds this many, so the kernel's ENOSPC cannot occur.
const batch = 256

// Open loads the programs and attaches them. Its errors wrap ErrUnavailable
// and fit on one line.
func Open() (*Tracer, error) { return open(PairMapSize) }

// open is Open with a pair map of pairs entries, so a test can fill one.
func open(pairs uint32) (t *Tracer, err error) {
	spec, err := object.Spec()
	if err != nil {
		return nil, err
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, object.Wrap(err)
	}
	spec.Maps[waketraceMapCpuStatMap].MaxEntries = uint32(ncpu)
	if m := spec.Maps[waketraceMapNotes]; m.MaxEntries != NoteSlots || m.ValueSize != 256 {
		return nil, fmt.Errorf("%w: note table holds %d entries of %d bytes, Go expects %d of 256", ErrUnavailable, m.MaxEntries, m.ValueSize, NoteSlots)
	}
	if m := spec.Maps[waketraceMapPairMap]; m.MaxEntries != PairMapSize {
		return nil, fmt.Errorf("%w: pair map holds %d entries, Go expects %d", ErrUnavailable, m.MaxEntries, PairMapSize)
	}
	spec.Maps[waketraceMapPairMap].MaxEntries = pairs
	if err := setPerCPULayout(spec); err != nil {
		return nil, object.Wrap(err)
	}
	t = &Tracer{}
	if err := object.Load(spec, &t.objs, nil); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			t.Close()
			t = nil
		}
	}()
	if t.waking, err = object.Attach(t.objs.CtxtopWaking); err != nil {
		return nil, err
	}
	t.keys = make([]waketracePairKey, batch)
	t.vals = make([]waketracePair, batch)
	t.cpuIDs = make([]uint32, ncpu)
	for i := range t.cpuIDs {
		t.cpuIDs[i] = uint32(i)
	}
	t.cpus = make([]waketraceCpuStats, ncpu)
	return t, nil
}

// SetPerCPU turns the per-CPU switch and migration counters on or off.
// The switch program runs at every context switch, so they are on only
// while something shows them; Read returns per-CPU totals only while they
// are on.
func (t *Tracer) SetPerCPU(on bool) error {
	t.perCPU = on
	return t.sync()
}

// TimeLatencies turns on or off the timing of wake-ups to the wakee's
// switch-in, which needs the switch program (attached anyway while the
// per-CPU counters are on).
func (t *Tracer) TimeLatencies(on bool) error {
	t.timing = on
	return t.sync()
}

// sync attaches and detaches the switch and migration programs as
// SetPerCPU and TimeLatencies asked.
func (t *Tracer) sync() error {
	var err1, err2 error
	t.sw, err1 = object.SetLink(t.sw, t.objs.CtxtopSwitch, t.perCPU || t.timing)
	t.migrate, err2 = object.SetLink(t.migrate, t.objs.CtxtopMigrate, t.perCPU)
	return errors.Join(err1, err2)
}

// Close detaches the programs and frees the maps. It is safe to call more
// than once.
func (t *Tracer) Close() error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, l := range []*bpfutil.RawLink{t.migrate, t.sw, t.waking} {
		if l != nil {
			errs = append(errs, l.Close())
		}
	}
	t.waking, t.sw, t.migrate = nil, nil, nil
	errs = append(errs, t.objs.Close())
	t.objs = waketraceObjects{}
	return errors.Join(errs...)
}

// Read drains the pair map into s.Pairs (so each read holds the pairs since
// the previous one) and copies the per-CPU totals (none while SetPerCPU has
// them off), with batch syscalls.
func (t *Tracer) Read(s *model.WakeupSample) error {
	s.Time = time.Now()
	s.Pairs = s.Pairs[:0]
	pairs := t.objs.PairMap.FD()
	for first := true; ; first = false {
		n, err := t.batch(unix.BPF_MAP_LOOKUP_AND_DELETE_BATCH, pairs, first, unsafe.Pointer(&t.keys[0]), unsafe.Pointer(&t.vals[0]), len(t.keys))
		for i := range n {
			k, v := &t.keys[i], &t.vals[i]
			p := model.WakeupPairCount{
				WakeePID: int(v.WakeePid), WakeeTID: int(k.WakeeTid), WakeeComm: bpfutil.Comm(&v.WakeeComm),
				Wakeups: v.Wakeups, Resolved: v.Resolved, CrossCPU: v.CrossCpu,
			}
			p.WakerPID, p.WakerTID, p.WakerComm = wakerOf(k.WakerTid, v.WakerPid, &v.WakerComm)
			for b, c := range v.Latency {
				p.Latency[b] = uint64(c)
			}
			s.Pairs = append(s.Pairs, p)
		}
		if err == unix.ENOENT {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", t.objs.PairMap, err)
		}
	}
	n, err := t.batch(unix.BPF_MAP_LOOKUP_BATCH, t.objs.CpuStatMap.FD(), true, unsafe.Pointer(&t.cpuIDs[0]), unsafe.Pointer(&t.cpus[0]), len(t.cpuIDs))
	if err != nil && err != unix.ENOENT {
		return fmt.Errorf("reading %s: %w", t.objs.CpuStatMap, err)
	}
	s.CPUs = s.CPUs[:0]
	s.Dropped = 0
	for _, c := range t.cpus[:n] {
		if t.perCPU {
			s.CPUs = append(s.CPUs, model.CPUSchedCount{Switches: c.Switches, Migrations: c.Migrations})
		}
		s.Dropped += c.Dropped
	}
	return nil
}

// batch runs one batch lookup command on the map with fd into keys and
// vals (count entries each, in t's buffers), from the start of the map or
// from where the previous call left t.cursor. It returns how many entries
// it filled, and unix.ENOENT with the last of them. It is a raw system
// call for the reason rawLink's are: the read at a refresh can find the
// runtime's sysmon asleep. The attr holds addresses as integers, which is
// safe because they point into t, on the heap, which Go never moves and
// which outlives the call.
func (t *Tracer) batch(cmd uintptr, fd int, first bool, keys, vals unsafe.Pointer, count int) (int, error) {
	attr := struct {
		inBatch, outBatch, keys, values uint64
		count, mapFD                    uint32
		elemFlags, flags                uint64
	}{
		outBatch: uint64(uintptr(unsafe.Pointer(&t.cursor))),
		keys:     uint64(uintptr(keys)),
		values:   uint64(uintptr(vals)),
		count:    uint32(count),
		mapFD:    uint32(fd),
	}
	if !first {
		// The kernel reads the cursor before it writes the next.
		attr.inBatch = attr.outBatch
	}
	_, _, e := unix.RawSyscall(unix.SYS_BPF, cmd, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if e != 0 {
		return int(attr.count), e
	}
	return int(attr.count), nil
}

// wakerOf is who a pair map key's waker is: a thread, the idle task (thread
// 0, keyed by CPU in the map), or a pseudo-waker, whose TID and PID are
// negative so nothing takes them for a thread to look up.
func wakerOf(key, pid uint32, c *[16]int8) (int, int, string) {
	switch {
	case key == keyIRQ:
		return model.WakerIRQ, model.WakerIRQ, model.WakerIRQComm
	case key == keySoftIRQ:
		return model.WakerSoftIRQ, model.WakerSoftIRQ, model.WakerSoftIRQComm
	case key == keyTimer:
		return model.WakerTimer, model.WakerTimer, model.WakerTimerComm
	case key&keyIdle != 0:
		return 0, 0, bpfutil.Comm(c)
	}
	return int(pid), int(key), bpfutil.Comm(c)
}
