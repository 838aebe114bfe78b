// Package stacks captures where chosen threads block and where their wakers
// wake them: eBPF programs on sched_switch and sched_waking take the kernel
// and user stacks of a target thread's voluntary switches and of the task
// that wakes it, and count them per (thread, stacks) in the kernel. A
// Collector drains the counts once per refresh, symbolizes the stacks
// (internal/symbolize) and keeps each target's top stacks over the last few
// refreshes; it chooses the targets from each snapshot.
package stacks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/symbolize"
)

// Map sizes; keep in step with the BPF source.
const (
	// MaxTargets is how many threads are traced at once.
	MaxTargets = 64
	// targetSlots and targetProbes shape the kernel's table of targets:
	// a target lies in slot tid % targetSlots or one of the next
	// targetProbes-1.
	targetSlots  = 4096
	targetProbes = 8
	// MaxStacks is how many distinct stacks the kernel keeps (8,192 of
	// MaxDepth frames: 4 MiB).
	MaxStacks = 8192
	// MaxDepth is the deepest stack kept; deeper ones lose their
	// outermost frames.
	MaxDepth = 64
	// MaxBlocked and MaxWakes bound the (thread, stacks) counts between
	// two reads; events beyond them are counted as dropped.
	MaxBlocked = 4096
	MaxWakes   = 4096
	// MaxGoProcesses is how many Go processes have their parked
	// goroutines followed at once; GoDepth is the most frames of a parked
	// goroutine kept (deeper ones lose their outermost frames).
	MaxGoProcesses = 128
	GoDepth        = 32
	// MaxStackBytes is the most user stack a capture copies; the BPF
	// program masks the size with it, so it is a power of two (one byte
	// less is the most it copies).
	MaxStackBytes = 8192
	// DefaultStackBytes is how much user stack a capture copies unless
	// told. Unwinding real programs stopped in their waits needed 512
	// bytes for a C thread in pthread_cond_wait, 576 for a C++ one in
	// std::condition_variable::wait, 3,840 inside a signal handler
	// (internal/unwind's live tests); Debian's debuginfod, a C++ server
	// on libmicrohttpd and sqlite, had 94% of its sampled stacks cut
	// short at 2,048 bytes and under 1% at 4,096.
	DefaultStackBytes = 4096
)

// ErrUnavailable wraps every reason the programs cannot run here.
var ErrUnavailable = errors.New("stacks unavailable")

// Check reports, without loading anything, why the tracer cannot run (see
// bpfutil.Needs.Check), in one line wrapping ErrUnavailable.
func Check() error {
	if err := bpfutil.Host().Check(); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Tracer is the loaded programs and their maps; SetAttached attaches them.
type Tracer struct {
	objs       stacksObjects
	sw, waking link.Link
	slots      map[uint32]stacksTarget // the table's non-empty slots as last written (countdowns aside)
	bkeys      []stacksBlockKey
	bvals      []uint64
	wkeys      []stacksWakeKey
	wvals      []stacksWakeVal
	counters   []stacksCounters
	stackBuf   []uint64
	goProcs    map[uint32]bool // the processes in go_procs
	ring       *ringbuf.Reader // the captures; nil when none are taken
	rec        ringbuf.Record
}

// Capture kinds: where a target blocked, or where its waker woke it.
const (
	CaptureBlock = 0
	CaptureWake  = 1
)

// Capture is a sampled event's user registers and stack copy, for user
// space to unwind with the binaries' CFI.
type Capture struct {
	Kind uint32
	// TID and PID are the thread whose stack it is (the target, or its
	// waker); Target is the target thread.
	TID, PID, Target int
	// Weight is how many of the target's events the sample stands for.
	Weight     uint32
	KStack     int32
	IP, SP, BP uint64
	Comm       [16]int8
	// Stack is the copy of the user stack from SP up; it is valid only
	// during the ReadCaptures callback it is handed to.
	Stack []byte
}

// BlockCount is how often a thread switched out voluntarily at one pair
// of stacks. A stack ID below 0 is a stack the kernel did not keep.
type BlockCount struct {
	TID, PID       int
	KStack, UStack int32
	// GoStack holds the return addresses of the parked goroutine the
	// thread blocked for, innermost first, 0-padded; all 0 for none.
	GoStack [GoDepth]uint64
	Count   uint64
}

// WakeCount is how often a waker, at one pair of stacks, woke a target
// thread from task context.
type WakeCount struct {
	WakeeTID, WakerTID, WakerPID int
	WakerComm                    string
	KStack, UStack               int32
	Count                        uint64
}

// Raw is one drain of the count maps, with the kernel's running totals.
type Raw struct {
	Blocked []BlockCount
	Wakes   []WakeCount
	// Totals since the programs were loaded: events dropped for a full
	// count map, target wakings in an interrupt (counted only here), and
	// stacks the stack map could not keep.
	Dropped, InterruptWakings, StackErrors uint64
	// CaptureLost counts the captures the ring had no room for, since
	// the programs were loaded (ReadCaptures reads the others).
	CaptureLost uint64
}

// batch is how many entries one batch syscall moves.
const batch = 256

// Open loads the programs, detached and with no target yet: SetAttached
// attaches them. They take frame-pointer stacks only.
func Open() (*Tracer, error) { return OpenCapture(0) }

// OpenCapture is Open with captures of stackBytes of user stack (at most
// MaxStackBytes-1) and the user registers at each sampled event, instead
// of the user stack the kernel walks by frame pointers; 0 for none.
func OpenCapture(stackBytes int) (t *Tracer, err error) {
	if stackBytes < 0 || stackBytes >= MaxStackBytes {
		return nil, fmt.Errorf("stack bytes %d: want 0 to %d", stackBytes, MaxStackBytes-1)
	}
	if err := bpfutil.Host().Prepare(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	spec, err := bpfutil.Spec(_StacksBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	for name, want := range map[string]uint32{"targets": targetSlots, "stack_map": MaxStacks, "blocked": MaxBlocked, "wakes": MaxWakes,
		"go_procs": MaxGoProcesses} {
		if got := spec.Maps[name].MaxEntries; got != want {
			return nil, fmt.Errorf("%w: map %s holds %d entries, Go expects %d", ErrUnavailable, name, got, want)
		}
	}
	if got := spec.Maps["stack_map"].ValueSize; got != MaxDepth*8 {
		return nil, fmt.Errorf("%w: stack map values are %d bytes, Go expects %d", ErrUnavailable, got, MaxDepth*8)
	}
	pc, err := bpfutil.PreemptCountFromRunQueue()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := spec.Variables["preempt_count_from_rq"].Set(pc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if err := spec.Variables["stack_bytes"].Set(uint32(stackBytes)); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	t = &Tracer{slots: map[uint32]stacksTarget{}, goProcs: map[uint32]bool{}}
	if err := spec.LoadAndAssign(&t.objs, nil); err != nil {
		return nil, fmt.Errorf("%w: the kernel cannot load the programs: %s", ErrUnavailable, bpfutil.FirstLine(err))
	}
	t.bkeys, t.bvals = make([]stacksBlockKey, batch), make([]uint64, batch)
	t.wkeys, t.wvals = make([]stacksWakeKey, batch), make([]stacksWakeVal, batch)
	t.stackBuf = make([]uint64, MaxDepth)
	if stackBytes > 0 {
		if t.ring, err = ringbuf.NewReader(t.objs.Captures); err != nil {
			t.objs.Close()
			return nil, fmt.Errorf("%w: capture ring: %v", ErrUnavailable, err)
		}
		// Never wait: Read takes what is there. The programs write with
		// BPF_RB_NO_WAKEUP, so a wait would not end early anyway.
		t.ring.SetDeadline(time.Unix(1, 0))
	}
	return t, nil
}

func attach(p *ebpf.Program) (link.Link, error) {
	l, err := link.AttachTracing(link.TracingOptions{Program: p, AttachType: ebpf.AttachTraceRawTp})
	if err != nil {
		return nil, fmt.Errorf("%w: cannot attach %s: %s", ErrUnavailable, p, bpfutil.FirstLine(err))
	}
	return l, nil
}

// SetAttached attaches (true) or detaches (false) both programs, keeping
// the maps: the collector attaches them only while it has targets.
func (t *Tracer) SetAttached(on bool) error {
	var err1, err2 error
	t.sw, err1 = setLink(t.sw, t.objs.CtxtopStacksSwitch, on)
	t.waking, err2 = setLink(t.waking, t.objs.CtxtopStacksWaking, on)
	return errors.Join(err1, err2)
}

func setLink(l link.Link, p *ebpf.Program, on bool) (link.Link, error) {
	switch {
	case on && l == nil:
		return attach(p)
	case !on && l != nil:
		return nil, l.Close()
	}
	return l, nil
}

// Target is a traced thread and how it is sampled: one of about Every of
// its blocking switches, and of its wakings, has its stacks taken (1 or
// 0: every one).
type Target struct {
	TID   int
	Every uint32
}

// SetTargets makes targets (at most MaxTargets; the rest are ignored) the
// traced threads, rewriting only the table slots that change: a target
// whose slot and sampling stay keeps its countdowns.
func (t *Tracer) SetTargets(targets []Target) error {
	want := placeTargets(targets)
	var errs []error
	// New and changed slots first, then the emptied ones: an empty slot
	// written before a target moved ahead of it would hide the target
	// from the lookups meanwhile.
	for slot, v := range want {
		if old, ok := t.slots[slot]; ok && old.Tid == v.Tid && old.Every == v.Every {
			continue
		}
		// The countdowns start at a random point too, so that the first
		// event after a change is no likelier to be taken than another.
		v.SwitchLeft, v.WakingLeft = 1+rand.Uint32N(v.Every), 1+rand.Uint32N(v.Every)
		if err := t.objs.Targets.Put(slot, &v); err != nil {
			errs = append(errs, err)
			continue
		}
		t.slots[slot] = v
	}
	for slot := range t.slots {
		if _, ok := want[slot]; ok {
			continue
		}
		if err := t.objs.Targets.Put(slot, &stacksTarget{}); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(t.slots, slot)
	}
	return errors.Join(errs...)
}

// placeTargets lays targets out in the kernel's table: each in slot
// tid % targetSlots, or the next free one within targetProbes, in order of
// TID so the same targets always take the same slots. A target with no
// free slot in reach (possible only when many TIDs fall within a few
// slots of each other modulo 4,096) is left out.
func placeTargets(targets []Target) map[uint32]stacksTarget {
	every := make(map[uint32]uint32, len(targets))
	for _, x := range targets {
		if len(every) == MaxTargets {
			break
		}
		if x.TID > 0 {
			every[uint32(x.TID)] = max(x.Every, 1)
		}
	}
	out := make(map[uint32]stacksTarget, len(every))
	for _, tid := range slices.Sorted(maps.Keys(every)) {
		for i := range uint32(targetProbes) {
			slot := (tid + i) % targetSlots
			if _, taken := out[slot]; !taken {
				out[slot] = stacksTarget{Tid: tid, Every: every[tid]}
				break
			}
		}
	}
	return out
}

// Read drains the count maps into r and reads the kernel's totals.
func (t *Tracer) Read(r *Raw) error {
	r.Blocked, r.Wakes = r.Blocked[:0], r.Wakes[:0]
	var cursor ebpf.MapBatchCursor
	for {
		n, err := t.objs.Blocked.BatchLookupAndDelete(&cursor, t.bkeys, t.bvals, nil)
		for i := range n {
			k := &t.bkeys[i]
			r.Blocked = append(r.Blocked, BlockCount{TID: int(k.Tid), PID: int(k.Pid), KStack: k.Kstack, UStack: k.Ustack, GoStack: k.Gstack, Count: t.bvals[i]})
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading blocked stacks: %w", err)
		}
	}
	cursor = ebpf.MapBatchCursor{}
	for {
		n, err := t.objs.Wakes.BatchLookupAndDelete(&cursor, t.wkeys, t.wvals, nil)
		for i := range n {
			k, v := &t.wkeys[i], &t.wvals[i]
			r.Wakes = append(r.Wakes, WakeCount{WakeeTID: int(k.WakeeTid), WakerTID: int(k.WakerTid), WakerPID: int(k.WakerPid),
				WakerComm: bpfutil.Comm(&v.WakerComm), KStack: k.Kstack, UStack: k.Ustack, Count: v.Count})
		}
		if errors.Is(err, ebpf.ErrKeyNotExist) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading waker stacks: %w", err)
		}
	}
	if err := t.objs.CounterMap.Lookup(uint32(0), &t.counters); err != nil {
		return fmt.Errorf("reading counters: %w", err)
	}
	r.Dropped, r.InterruptWakings, r.StackErrors = 0, 0, 0
	for _, c := range t.counters {
		r.Dropped += c.Dropped
		r.InterruptWakings += c.IrqWakings
		r.StackErrors += c.StackErrors
		r.CaptureLost += c.CaptureLost
	}
	return nil
}

// captureHeader is the bytes of a capture before its stack copy.
const captureHeader = int(unsafe.Offsetof(stacksCapture{}.Stack))

// ReadCaptures drains the capture ring, handing each capture to fn; the
// capture and its stack bytes are the ring's record, valid only during
// the call, so nothing is allocated or copied per capture. It returns how
// many were read.
func (t *Tracer) ReadCaptures(fn func(*Capture)) (int, error) {
	if t.ring == nil {
		return 0, nil
	}
	var c Capture
	n := 0
	for {
		err := t.ring.ReadInto(&t.rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("reading captures: %w", err)
		}
		b := t.rec.RawSample
		if len(b) < captureHeader {
			continue
		}
		size := min(int(binary.LittleEndian.Uint32(b[24:])), len(b)-captureHeader)
		c = Capture{
			Kind: binary.LittleEndian.Uint32(b[0:]), TID: int(binary.LittleEndian.Uint32(b[4:])),
			PID: int(binary.LittleEndian.Uint32(b[8:])), Target: int(binary.LittleEndian.Uint32(b[12:])),
			Weight: binary.LittleEndian.Uint32(b[16:]), KStack: int32(binary.LittleEndian.Uint32(b[20:])),
			IP: binary.LittleEndian.Uint64(b[32:]), SP: binary.LittleEndian.Uint64(b[40:]), BP: binary.LittleEndian.Uint64(b[48:]),
			Stack: b[captureHeader : captureHeader+size : captureHeader+size],
		}
		for i := range c.Comm {
			c.Comm[i] = int8(b[56+i])
		}
		fn(&c)
		n++
	}
}

// Reset detaches the programs, forgets the targets and empties the count
// and stack maps, leaving the tracer loaded as Open left it but detached.
func (t *Tracer) Reset() error {
	var raw Raw
	_, rerr := t.ReadCaptures(func(*Capture) {})
	errs := []error{t.SetAttached(false), t.SetTargets(nil), t.Read(&raw), rerr}
	// Every stack, also those whose count did not fit in a count map.
	var ids []uint32
	var id uint32
	it := t.objs.StackMap.Iterate()
	for it.Next(&id, t.stackBuf) {
		ids = append(ids, id)
	}
	errs = append(errs, it.Err())
	for _, id := range ids {
		if err := t.objs.StackMap.Delete(id); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			errs = append(errs, err)
		}
	}
	for pid := range t.goProcs {
		errs = append(errs, t.SetGoProcess(int(pid), nil))
	}
	return errors.Join(errs...)
}

// SetGoProcess registers process pid as a Go program whose runtime has
// layout rt, so that its threads' blocking switches in the Go scheduler
// follow the goroutine locked to the thread; a nil rt forgets it.
func (t *Tracer) SetGoProcess(pid int, rt *symbolize.GoRuntime) error {
	key := uint32(pid)
	if rt == nil {
		if !t.goProcs[key] {
			return nil
		}
		delete(t.goProcs, key)
		if err := t.objs.GoProcs.Delete(key); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
		return nil
	}
	v := stacksGoRuntime{G_m: rt.GM, G_stack: rt.GStack, G_schedPc: rt.GSchedPC,
		G_schedBp: rt.GSchedBP, M_g0: rt.MG0, M_lockedg: rt.MLockedG}
	if err := t.objs.GoProcs.Put(key, &v); err != nil {
		return err
	}
	t.goProcs[key] = true
	return nil
}

// Stack returns the addresses of stack id, innermost first, in a new
// slice; nil when the kernel no longer holds it.
func (t *Tracer) Stack(id int32) []uint64 {
	if id < 0 {
		return nil
	}
	clear(t.stackBuf)
	if err := t.objs.StackMap.Lookup(uint32(id), t.stackBuf); err != nil {
		return nil
	}
	n := 0
	for n < len(t.stackBuf) && t.stackBuf[n] != 0 {
		n++
	}
	return append([]uint64(nil), t.stackBuf[:n]...)
}

// FreeStack frees stack id in the kernel's stack map.
func (t *Tracer) FreeStack(id int32) {
	if id >= 0 {
		_ = t.objs.StackMap.Delete(uint32(id))
	}
}

// Close detaches the programs and frees the maps; safe to call twice.
func (t *Tracer) Close() error {
	if t == nil {
		return nil
	}
	var errs []error
	for _, l := range []link.Link{t.sw, t.waking} {
		if l != nil {
			errs = append(errs, l.Close())
		}
	}
	t.sw, t.waking = nil, nil
	if t.ring != nil {
		errs = append(errs, t.ring.Close())
		t.ring = nil
	}
	errs = append(errs, t.objs.Close())
	t.objs = stacksObjects{}
	return errors.Join(errs...)
}
