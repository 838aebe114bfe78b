// Package unwind walks a thread's user stack from its registers and a copy
// of the top of its stack, the way perf --call-graph dwarf does, for code
// built without frame pointers (distribution libc, most -O2 binaries).
//
//	u, err := unwind.New(unwind.Options{Proc: "/proc"})
//	st := u.Unwind(pid, unwind.Regs{IP: ip, SP: sp, BP: bp}, stackCopy)
//	frames, err := sym.User(pid, st.PCs, symbolize.StackAddresses)
//	if st.Reason != unwind.End { /* "truncated: " + st.Why() */ }
//
// Each step finds the executable mapping holding the PC (/proc/PID/maps),
// the file's .eh_frame (through .eh_frame_hdr's binary search table) or
// .debug_frame, runs the FDE's CFA program to the PC, and computes the
// caller's CFA, return address and registers: CFA rules reg+offset and
// expressions, register rules undefined, same value, offset, val_offset,
// register, expression and val_expression, remember/restore_state, PLT
// stubs (a CFA expression) and signal frames (glibc's __restore_rt
// describes the ucontext with expressions; the 'S' augmentation marks its
// PC exact). Where no CFI covers a PC (JIT code, assembly without CFI) the
// step follows the frame pointer instead (mixed mode).
//
// Never invent a frame: every return address must fall in an executable
// mapping of the process, every CFA must be above the stack pointer it
// replaces, and every read must come from the copy; otherwise the stack
// ends there with a Reason saying why, and the PCs found so far.
//
// Only x86-64 is unwound. The rows computed are cached per (file, PC),
// least recently used out beyond Options.Rows; the files' CFI sections
// per file identity (and build id), beyond Options.CacheBytes.
package unwind

import (
	"container/list"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/symbolize"
)

// Regs are the user registers a capture takes at the switch.
type Regs struct {
	IP, SP, BP uint64
}

// Reason says why a stack ends.
type Reason uint8

const (
	// End is the outermost frame: its CFI marks the return address
	// undefined (glibc's clone3, _start), or the frame chain ends in zero.
	End Reason = iota
	// StackShort means a value needed lies in the thread's stack beyond
	// the copy taken.
	StackShort
	// NoUnwindInfo means no CFI covers the PC (Stack.Object names the
	// file) and no frame pointer could be followed.
	NoUnwindInfo
	// OutsideMapping means a return address (Stack.Addr) falls in no
	// executable mapping of the process.
	OutsideMapping
	// BadCFA means the CFA did not rise above the stack pointer (a loop),
	// or could not be computed, or a saved register lies outside the
	// thread's stack.
	BadCFA
	// BadCFI means the file's CFI (Stack.Object) is malformed.
	BadCFI
	// TooDeep means Options.MaxFrames were found.
	TooDeep
	// NoMaps means the process's mappings could not be read (it exited).
	NoMaps
)

// more is a step's result when the walk goes on.
const more Reason = 255

var reasonText = [...]string{
	End:            "end of stack",
	StackShort:     "stack copy too short",
	NoUnwindInfo:   "no unwind info",
	OutsideMapping: "address outside any executable mapping",
	BadCFA:         "CFA not above the stack pointer",
	BadCFI:         "malformed unwind info",
	TooDeep:        "too many frames",
	NoMaps:         "mappings not readable",
}

func (r Reason) String() string {
	if int(r) < len(reasonText) {
		return reasonText[r]
	}
	return "reason " + strconv.Itoa(int(r))
}

// Stack is an unwound user stack.
type Stack struct {
	// PCs are the instruction pointer, then return addresses: the
	// convention of symbolize.StackAddresses.
	PCs []uint64
	// Reason is why the stack ends after PCs.
	Reason Reason
	// Object is the mapped file the last step was in (for NoUnwindInfo and
	// BadCFI), sanitized.
	Object string
	// Addr is the offending address (OutsideMapping).
	Addr uint64
	// ByFramePointer counts the frames reached by frame pointers.
	ByFramePointer int
	// exact marks the PCs that are not return addresses: the first, a
	// signal trampoline's, and the one a signal interrupted.
	exact [2]uint64
}

// Exact reports whether PCs[i] is not a return address, so that it is
// looked up as it is and not one byte early: the first PC, a signal
// trampoline's (the handler returns to its first byte) and the
// instruction a signal interrupted. For symbolize.UserExact.
func (s Stack) Exact(i int) bool {
	return i >= 0 && i < 128 && s.exact[i/64]&(1<<(i%64)) != 0
}

func (s *Stack) setExact(i int) {
	if i >= 0 && i < 128 {
		s.exact[i/64] |= 1 << (i % 64)
	}
}

// Why is the reason in words, with the object or the address it concerns:
// "no unwind info in libjit.so", what a view shows after a truncated stack.
func (s Stack) Why() string {
	switch s.Reason {
	case NoUnwindInfo, BadCFI:
		if s.Object != "" {
			return s.Reason.String() + " in " + s.Object
		}
	case OutsideMapping:
		return s.Reason.String() + ": 0x" + strconv.FormatUint(s.Addr, 16)
	}
	return s.Reason.String()
}

// Options configure an Unwinder; zero values take the defaults named.
type Options struct {
	// Proc is the procfs root.
	Proc string
	// CacheBytes bounds the CFI sections kept for files (default 64 MiB).
	CacheBytes int
	// Rows bounds the unwind rows kept, one per (file, PC) (default
	// 16,384, about 5 MiB).
	Rows int
	// MaxFrames ends a stack (default 127, bpf_get_stackid's limit).
	MaxFrames int
	// MaxProcesses bounds the processes whose mappings are kept (1,024).
	MaxProcesses int
	// MapsMaxAge is how long mappings are trusted (2 s); a PC outside all
	// of them re-reads them sooner, at most once per MinRefresh (100 ms).
	MapsMaxAge, MinRefresh time.Duration
}

// Unwinder unwinds stacks of live processes. Safe for concurrent use;
// calls are serialized.
type Unwinder struct {
	opt Options

	mu      sync.Mutex
	objects lru // of *cfiObject, by file key and build id
	objUsed int
	rows    lru // of *row, by rowKey
	procs   map[int]*process
	tick    uint64
}

// New returns an Unwinder reading the procfs at opt.Proc.
func New(opt Options) (*Unwinder, error) {
	if opt.Proc == "" {
		return nil, errors.New("unwind: no procfs root given")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opt.CacheBytes, 64<<20)
	def(&opt.Rows, 16384)
	def(&opt.MaxFrames, 127)
	opt.MaxFrames = min(opt.MaxFrames, 128) // Stack.exact's bits
	def(&opt.MaxProcesses, 1024)
	if opt.MapsMaxAge <= 0 {
		opt.MapsMaxAge = 2 * time.Second
	}
	if opt.MinRefresh <= 0 {
		opt.MinRefresh = 100 * time.Millisecond
	}
	return &Unwinder{opt: opt, objects: newLRU(), rows: newLRU(), procs: map[int]*process{}}, nil
}

// Forget drops what is kept for pid (the process exited).
func (u *Unwinder) Forget(pid int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.procs, pid)
}

// Stats is what an Unwinder holds.
type Stats struct {
	Objects, ObjectBytes, Rows, Processes int
}

// Stats reports what is kept.
func (u *Unwinder) Stats() Stats {
	u.mu.Lock()
	defer u.mu.Unlock()
	return Stats{Objects: u.objects.order.Len(), ObjectBytes: u.objUsed, Rows: u.rows.order.Len(), Processes: len(u.procs)}
}

type process struct {
	pid    int
	maps   []mapping // all mappings, sorted by start
	readAt time.Time
	used   uint64
}

type mapping struct {
	symbolize.Mapping
	key   string // the object's cache key once opened
	err   error
	tried bool
}

func (p *process) find(addr uint64) *mapping {
	i := sort.Search(len(p.maps), func(i int) bool { return p.maps[i].Start > addr })
	if i--; i < 0 || addr >= p.maps[i].End {
		return nil
	}
	return &p.maps[i]
}

// Unwind walks the stack of a thread of process pid from its registers and
// stack, a copy of the bytes from regs.SP up. It never fails: a stack that
// cannot be walked further ends with its Reason.
func (u *Unwinder) Unwind(pid int, regs Regs, stack []byte) Stack {
	var st Stack
	u.UnwindInto(&st, pid, regs, stack)
	return st
}

// UnwindInto is Unwind into st, reusing st.PCs' memory: a capture that
// unwinds every sample allocates nothing once the rows are cached.
func (u *Unwinder) UnwindInto(st *Stack, pid int, regs Regs, stack []byte) {
	*st = Stack{PCs: st.PCs[:0]}
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	p := u.process(pid, now)
	if p == nil {
		st.PCs = append(st.PCs, regs.IP)
		st.Reason = NoMaps
		return
	}
	w := walker{u: u, p: p, now: now, mem: memory{base: regs.SP, b: stack}}
	if m := p.find(regs.SP); m != nil {
		w.mem.lo, w.mem.hi = m.Start, m.End
	} else {
		w.mem.lo, w.mem.hi = regs.SP, regs.SP+uint64(len(stack))
	}
	w.walk(st, regs)
}

func objectName(m *mapping) string {
	if m.Path == "" {
		return "[anon]"
	}
	return sanitize.Name(filepath.Base(m.Path))
}

// memory is the copy of the stack; lo and hi bound the mapping holding the
// stack pointer, which tells "the copy is too short" from "not the stack".
type memory struct {
	base   uint64
	b      []byte
	lo, hi uint64
}

var (
	errShort    = errors.New("beyond the stack copy")
	errNotStack = errors.New("outside the thread's stack")
)

func (m *memory) read(addr uint64) (uint64, error) {
	if addr < m.base || addr < m.lo || addr+8 > m.hi || addr+8 < addr {
		return 0, errNotStack
	}
	off := addr - m.base
	if off+8 > uint64(len(m.b)) {
		return 0, errShort
	}
	b := m.b[off:]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56, nil
}

// regState holds the registers known in a frame.
type regState struct {
	v     [nRegs]uint64
	known uint32
}

func (r *regState) get(reg uint64) (uint64, bool) {
	if reg >= nRegs || r.known&(1<<reg) == 0 {
		return 0, false
	}
	return r.v[reg], true
}

func (r *regState) set(reg int, v uint64) { r.v[reg], r.known = v, r.known|1<<reg }

type walker struct {
	u   *Unwinder
	p   *process
	now time.Time
	mem memory
	// refreshed: the maps were re-read once during this walk already.
	refreshed bool
}

// execMapping finds the executable mapping holding addr, re-reading the
// mappings once when none does (code mapped since).
func (w *walker) execMapping(addr uint64) *mapping {
	m := w.p.find(addr)
	if m == nil && !w.refreshed && w.now.Sub(w.p.readAt) >= w.u.opt.MinRefresh {
		w.refreshed = true
		if w.u.refresh(w.p, w.now) == nil {
			m = w.p.find(addr)
		}
	}
	if m == nil || !m.Exec() {
		return nil
	}
	return m
}

func (w *walker) walk(st *Stack, start Regs) {
	var regs regState
	regs.set(regRA, start.IP)
	regs.set(regRSP, start.SP)
	regs.set(regRBP, start.BP)
	exact := true // the first PC is where the thread is, not a return address
	for {
		pc := regs.v[regRA]
		m := w.execMapping(pc)
		if m == nil && !exact {
			// The CFA or frame-pointer step before gave an address no
			// executable mapping holds: the stack ends without it.
			st.Reason, st.Addr = OutsideMapping, pc
			return
		}
		st.PCs = append(st.PCs, pc)
		if exact {
			st.setExact(len(st.PCs) - 1)
		}
		if m == nil {
			st.Reason, st.Addr = OutsideMapping, pc
			return
		}
		if len(st.PCs) >= w.u.opt.MaxFrames {
			st.Reason = TooDeep
			return
		}
		look := pc
		if !exact {
			look = pc - 1 // inside the call instruction, not after it
		}
		r, obj, err := w.row(m, look)
		var next regState
		reason := BadCFI
		switch {
		case err == nil:
			next, reason = w.stepCFI(r, obj, &regs)
			if r.signal {
				st.setExact(len(st.PCs) - 1)
			}
			exact = r.signal
		case errors.Is(err, errNoFDE):
			next, reason = w.stepFP(&regs)
			if reason == more {
				st.ByFramePointer++
			}
			exact = false
		}
		if reason != more {
			if reason == NoUnwindInfo || reason == BadCFI {
				st.Object = objectName(m)
			}
			st.Reason = reason
			return
		}
		if next.v[regRA] == 0 {
			st.Reason = End
			return
		}
		if next.v[regRSP] <= regs.v[regRSP] {
			st.Reason = BadCFA
			return
		}
		regs = next
	}
}

// row returns the unwind row for the executable mapping m at addr, from
// the cache or computed; errNoFDE when the file has no CFI for it.
func (w *walker) row(m *mapping, addr uint64) (*row, *cfiObject, error) {
	obj, err := w.u.object(w.p.pid, m)
	if err != nil {
		if errors.Is(err, errNoFile) {
			return nil, nil, errNoFDE
		}
		return nil, nil, err
	}
	v, ok := obj.vaddr(addr - m.Start + m.Offset)
	if !ok {
		return nil, nil, errNoFDE
	}
	key := rowKey{obj: obj.key, pc: v}
	if e := w.u.rows.get(key); e != nil {
		return e.(*row), obj, nil
	}
	f, sec, err := obj.findFDE(v)
	if err != nil {
		return nil, nil, err
	}
	r, err := computeRow(&f, sec, v)
	if err != nil {
		return nil, nil, err
	}
	w.u.rows.put(key, &r)
	for w.u.rows.order.Len() > w.u.opt.Rows {
		w.u.rows.removeOldest()
	}
	return &r, obj, nil
}

type rowKey struct {
	obj string
	pc  uint64
}

// stepCFI computes the caller's registers from a row. End with the RA
// unknown is the outermost frame.
func (w *walker) stepCFI(r *row, obj *cfiObject, regs *regState) (regState, Reason) {
	var next regState
	sec := &obj.eh
	if r.debug {
		sec = &obj.dbg
	}
	code := func(ru rule) []byte {
		if ru.off < 0 || ru.off+int64(ru.n) > int64(len(sec.data)) {
			return nil
		}
		return sec.data[ru.off : ru.off+int64(ru.n)]
	}
	fail := func(err error) Reason {
		if errors.Is(err, errShort) {
			return StackShort
		}
		return BadCFA
	}
	var cfa uint64
	switch r.cfa.kind {
	case ruleCFAReg:
		base, ok := regs.get(uint64(r.cfa.reg))
		if !ok {
			return next, BadCFA
		}
		cfa = base + uint64(r.cfa.off)
	case ruleCFAExpr:
		c := code(r.cfa)
		if c == nil {
			return next, BadCFA
		}
		v, err := evalExpr(c, regs, &w.mem, 0, false)
		if err != nil {
			return next, fail(err)
		}
		cfa = v
	}
	if r.regs[regRA].kind == ruleUndef {
		return next, End // the outermost frame
	}
	if cfa <= regs.v[regRSP] {
		return next, BadCFA
	}
	for reg := range nRegs {
		ru := r.regs[reg]
		switch ru.kind {
		case ruleSame:
			if v, ok := regs.get(uint64(reg)); ok {
				next.set(reg, v)
			}
		case ruleUndef:
		case ruleOffset:
			v, err := w.mem.read(cfa + uint64(ru.off))
			if err != nil {
				if reg == regRA {
					return next, fail(err)
				}
				continue // a register we cannot restore becomes unknown
			}
			next.set(reg, v)
		case ruleValOffset:
			next.set(reg, cfa+uint64(ru.off))
		case ruleRegister:
			if v, ok := regs.get(uint64(ru.reg)); ok {
				next.set(reg, v)
			}
		case ruleExpr, ruleValExpr:
			c := code(ru)
			if c == nil {
				continue
			}
			v, err := evalExpr(c, regs, &w.mem, cfa, true)
			if err == nil && ru.kind == ruleExpr {
				v, err = w.mem.read(v)
			}
			if err != nil {
				if reg == regRA {
					return next, fail(err)
				}
				continue
			}
			next.set(reg, v)
		}
	}
	// The caller's stack pointer is the CFA unless a rule says otherwise
	// (a signal frame restores the interrupted one).
	if r.regs[regRSP].kind == ruleSame {
		next.set(regRSP, cfa)
	}
	if next.known&(1<<regRA) == 0 {
		return next, BadCFA
	}
	return next, more
}

// stepFP follows the frame pointer: the caller's frame pointer is saved at
// [rbp], the return address at [rbp+8], and the caller's stack pointer is
// rbp+16. Only used where no CFI covers the PC; the walk then checks that
// the return address lands in an executable mapping.
func (w *walker) stepFP(regs *regState) (regState, Reason) {
	var next regState
	bp, ok := regs.get(regRBP)
	if !ok || bp < regs.v[regRSP] {
		return next, NoUnwindInfo // no frame pointer to follow
	}
	ra, err := w.mem.read(bp + 8)
	if err == nil {
		var saved uint64
		if saved, err = w.mem.read(bp); err == nil {
			next.set(regRBP, saved)
		}
	}
	if err != nil {
		if errors.Is(err, errShort) {
			return next, StackShort
		}
		return next, NoUnwindInfo // %rbp holds data, not a frame
	}
	next.set(regRA, ra)
	next.set(regRSP, bp+16)
	return next, more
}

// errNoFile means the mapping is not of a file that could be read (an
// anonymous JIT region, [vdso]): no CFI, try the frame pointer.
var errNoFile = errors.New("no file to read CFI from")

// object returns the CFI of the file m maps, opening it the first time.
func (u *Unwinder) object(pid int, m *mapping) (*cfiObject, error) {
	if !m.FileBacked() {
		return nil, errNoFile
	}
	if m.tried {
		if m.err != nil {
			return nil, m.err
		}
		if o := u.objects.get(m.key); o != nil {
			return o.(*cfiObject), nil
		}
	}
	m.tried = true
	o, err := u.openObject(pid, m)
	if err != nil {
		m.err = err
		if !errors.Is(err, ErrParse) {
			err = errNoFile // unreadable (gone, replaced): unwind on by frame pointer
			m.err = err
		}
		return nil, err
	}
	m.key = o.key
	return o, nil
}

func (u *Unwinder) openObject(pid int, m *mapping) (*cfiObject, error) {
	f, key, err := symbolize.OpenMapped(u.opt.Proc, pid, m.Mapping)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if o := u.objects.get(key); o != nil {
		return o.(*cfiObject), nil
	}
	o, err := loadCFI(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sanitize.Name(m.Path), err)
	}
	o.key = key
	u.objects.put(key, o)
	u.objUsed += o.bytes()
	for u.objUsed > u.opt.CacheBytes && u.objects.order.Len() > 1 {
		old := u.objects.removeOldest().(*cfiObject)
		u.objUsed -= old.bytes()
	}
	return o, nil
}

// process returns pid's entry, reading its mappings when new or stale; nil
// when they cannot be read.
func (u *Unwinder) process(pid int, now time.Time) *process {
	u.tick++
	p := u.procs[pid]
	if p == nil {
		p = &process{pid: pid}
	}
	p.used = u.tick
	if p.readAt.IsZero() || now.Sub(p.readAt) >= u.opt.MapsMaxAge {
		if err := u.refresh(p, now); err != nil {
			delete(u.procs, pid)
			return nil
		}
	}
	if u.procs[pid] == nil {
		u.procs[pid] = p
		for len(u.procs) > u.opt.MaxProcesses {
			oldest, used := -1, uint64(0)
			for id, q := range u.procs {
				if oldest < 0 || q.used < used {
					oldest, used = id, q.used
				}
			}
			delete(u.procs, oldest)
		}
	}
	return p
}

// maxMapsBytes caps /proc/PID/maps, as the symbolizer does.
const maxMapsBytes = 64 << 20

func (u *Unwinder) refresh(p *process, now time.Time) error {
	b, err := procfs.ReadFile(filepath.Join(u.opt.Proc, strconv.Itoa(p.pid), "maps"), maxMapsBytes)
	if err != nil {
		return err
	}
	all, err := symbolize.ParseMaps(b)
	if err != nil {
		return err
	}
	maps := make([]mapping, len(all))
	for i, m := range all {
		maps[i] = mapping{Mapping: m}
		if old := p.find(m.Start); old != nil && old.Mapping == m {
			maps[i] = *old
		}
	}
	sort.Slice(maps, func(i, j int) bool { return maps[i].Start < maps[j].Start })
	p.maps, p.readAt = maps, now
	return nil
}

// lru is a least-recently-used map; callers bound it.
type lru struct {
	order list.List // of *lruEntry, most recent first
	byKey map[any]*list.Element
}

type lruEntry struct {
	key any
	val any
}

func newLRU() lru { return lru{byKey: map[any]*list.Element{}} }

func (c *lru) get(key any) any {
	e := c.byKey[key]
	if e == nil {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).val
}

func (c *lru) put(key, val any) {
	if e := c.byKey[key]; e != nil {
		c.order.Remove(e)
	}
	c.byKey[key] = c.order.PushFront(&lruEntry{key: key, val: val})
}

func (c *lru) removeOldest() any {
	e := c.order.Back()
	if e == nil {
		return nil
	}
	le := e.Value.(*lruEntry)
	c.order.Remove(e)
	delete(c.byKey, le.key)
	return le.val
}
