package stacks

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/symbolize"
	"github.com/ctxtop/ctxtop/internal/unwind"
)

// Options choose what the collector traces and keeps.
type Options struct {
	// Proc is the procfs root the symbolizer reads (/proc).
	Proc string
	// PIDs, when given (-p), makes every thread of these processes a
	// target, up to MaxTargets; otherwise the Hot hottest blocking threads
	// of each snapshot are.
	PIDs []int
	// Hot is how many hot blocking threads are targeted (default 8).
	Hot int
	// Window is how many refreshes a kernel stack stays kept after the
	// last count that referred to it (default model.DefaultStackWindow,
	// the shares' window): a stack of the window is resolved once.
	Window int
	// Budget is about how many events of each kind (blocking switches,
	// wakings) are sampled a second over all targets (default
	// sampleBudget).
	Budget int
	// StackBytes is how much of the user stack a sampled event copies,
	// with the user registers, to unwind with the binaries' CFI (default
	// DefaultStackBytes, at most MaxStackBytes-1); below 0 none is, and
	// user stacks are the kernel's frame-pointer walks alone.
	StackBytes int
}

// Collector attaches the tracer only while wanted, drains and symbolizes
// its counts once per refresh (Drain), and picks the next targets from the
// snapshot made from them (Retarget); the shares over the last refreshes
// are the pipeline's (model.StackWindow). Its methods are safe from any
// goroutine; the fields below life are guarded by its lock.
type Collector struct {
	opt   Options
	focus atomic.Int64

	life   *bpfutil.Lifecycle[*Tracer]
	sym    *symbolize.Symbolizer
	symErr error
	unw    *unwind.Unwinder
	ust    unwind.Stack
	// every is each target's sampling as last set: the events a sample
	// of it stands for.
	every   map[int]uint32
	comms   map[[16]int8]string
	raw     Raw
	lastRaw Raw
	// cache holds resolved stacks by their kernel IDs and process, while
	// those IDs stay in the kernel's map; used says at which refresh an
	// ID was last referred to, so IDs no count refers to are freed.
	cache   map[resolveKey]*resolved
	used    map[int32]int
	refresh int
	targets []int
	// goPIDs are the targets' processes looked at for a Go runtime to
	// follow parked goroutines in, and what was found: nil when the tracer
	// follows them, else why not (ErrNotGo for most).
	goPIDs map[int]error
	duty   dutyState
}

// A target's blocking switch costs some 0.7 µs and a waking of it 1.2 µs
// with their stacks (bpf_stats on a 2-CPU VM), against some 40 ns for any
// switch or waking while the programs are attached at all. So a target
// that switches often is sampled in the kernel: each target gets an equal
// part of sampleBudget samples a second of each kind, one of every
// rate/part of its events (a pinned futex ping-pong's two threads, 250,000
// switches a second each, one in 500). The programs stay attached while
// the collector is on; only the sampling changes each refresh.
const (
	sampleBudget = 1000
	// seedEvery samples the -p threads before any snapshot says how often
	// they switch.
	seedEvery = 16
)

// KeepLoaded is how long the programs and maps stay loaded, detached,
// after the collector is turned off. Loading them takes 100 ms to a
// second here (the verifier, the 4 MiB stack map), and the views turn the
// collector off and on as the detail view closes and opens: within this
// time turning it on again only attaches. After it nothing is held.
const KeepLoaded = 5 * time.Second

// sampleEvery is one in how many events of a target switching rate times
// a second is sampled, with budget samples a second shared by n targets.
func sampleEvery(rate float64, n, budget int) uint32 {
	part := float64(budget) / float64(max(n, 1))
	if rate <= part {
		return 1
	}
	return uint32(min(math.Ceil(rate/part), math.MaxUint32))
}

type resolveKey struct {
	pid            int
	kstack, ustack int32
	gstack         [GoDepth]uint64
	// A captured stack (ustack capturedStack): its unwound PCs and why
	// the unwind ended.
	pcs [MaxDepth]uint64
	why unwind.Reason
}

// capturedStack is resolveKey.ustack for a stack unwound from a capture.
const capturedStack = -1 << 30

// resolved is a symbolized stack.
type resolved struct {
	frames       []string // innermost first: kernel frames, then user frames
	kernelFrames int
	own          string
	noFP         string
	truncated    string
	sig          string
	usedAt       int // the refresh that last resolved it
}

// interval is one refresh's counts per target thread and stack.
type interval struct {
	blocked, woken map[int]map[string]*counted
}

type counted struct {
	r      *resolved
	pid    int
	waker  string
	count  uint64
	weight uint64
}

// NewCollector returns a collector that is off.
func NewCollector(opt Options) *Collector {
	if opt.Proc == "" {
		opt.Proc = "/proc"
	}
	if opt.Hot <= 0 {
		opt.Hot = 8
	}
	if opt.Window <= 0 {
		opt.Window = model.DefaultStackWindow
	}
	if opt.Budget <= 0 {
		opt.Budget = sampleBudget
	}
	switch {
	case opt.StackBytes == 0:
		opt.StackBytes = DefaultStackBytes
	case opt.StackBytes < 0:
		opt.StackBytes = 0
	}
	c := &Collector{opt: opt}
	c.life = bpfutil.NewLifecycle(bpfutil.Hooks[*Tracer]{Open: func() (*Tracer, error) { return OpenCapture(opt.StackBytes) },
		Start: c.start, Stop: c.duty.cancel, Idle: (*Tracer).Reset, Keep: KeepLoaded})
	return c
}

// Want records whether the programs should be attached; Apply makes it so.
func (c *Collector) Want(on bool) { c.life.Want(on) }

// SetEnabled is Want then Apply.
func (c *Collector) SetEnabled(on bool) { c.life.SetEnabled(on) }

// Focus makes tid (the detail view's thread) a target ahead of any other
// from the next refresh on; 0 for none.
func (c *Collector) Focus(tid int) { c.focus.Store(int64(tid)) }

// Err is why the programs could not be attached, nil when they are.
func (c *Collector) Err() error { return c.life.Err() }

// Apply attaches or detaches the programs as the last Want asked; turned
// off, they stay loaded, detached and emptied, for KeepLoaded.
func (c *Collector) Apply() { c.life.Apply() }

// Close detaches the programs for good.
func (c *Collector) Close() { c.life.Close() }

// tracer is the tracer while one is loaded, nil otherwise; c.life is
// locked.
func (c *Collector) tracer() *Tracer {
	tr, _, _ := c.life.Ready()
	return tr
}

// start traces afresh from the tracer loaded now or kept loaded.
func (c *Collector) start(tr *Tracer) error {
	if c.sym == nil {
		// DEBUGINFOD_URLS, as GDB and perf read it: names of stripped
		// libraries fetched in the background, never waited for.
		c.sym, c.symErr = symbolize.New(symbolize.Options{Proc: c.opt.Proc, Debuginfod: symbolize.DebuginfodFromEnv()})
	}
	if c.unw == nil && c.opt.StackBytes > 0 {
		c.unw, _ = unwind.New(unwind.Options{Proc: c.opt.Proc, MaxFrames: MaxDepth})
	}
	c.cache, c.used, c.goPIDs = map[resolveKey]*resolved{}, map[int32]int{}, map[int]error{}
	c.lastRaw = Raw{}
	// A -p target's threads are known before any snapshot: trace them
	// from the start, so the first report already has stacks.
	c.targets = c.seed()
	seeds := make([]Target, len(c.targets))
	c.every, c.comms = map[int]uint32{}, map[[16]int8]string{}
	for i, tid := range c.targets {
		seeds[i] = Target{TID: tid, Every: seedEvery}
		c.every[tid] = seedEvery
	}
	c.followGo(c.opt.PIDs)
	c.duty.reset(time.Now(), false)
	if err := c.setTargets(seeds, 1, 0); err != nil {
		return err
	}
	// The kernel's totals run on while the tracer is kept loaded: count from here.
	return tr.Read(&c.lastRaw)
}

// setTargets hands the targets to the tracer and attaches the programs
// only while there is one: with none, no switch anywhere pays for them.
// With k > 1 they are attached for a window of 1/k of the coming
// refresh of interval only (see duty).
func (c *Collector) setTargets(targets []Target, k int, interval time.Duration) error {
	tr := c.tracer()
	c.duty.cancel()
	err := tr.SetTargets(targets)
	on := len(targets) > 0 && k == 1
	if aerr := c.attach(tr, on); aerr != nil {
		return errors.Join(err, aerr)
	}
	if len(targets) > 0 && k > 1 {
		c.duty.window(interval, k, c.flip)
	}
	return err
}

// attach attaches or detaches the programs, keeping the time they were
// detached.
func (c *Collector) attach(tr *Tracer, on bool) error {
	err := tr.SetAttached(on)
	if err == nil {
		c.duty.set(time.Now(), on)
	}
	return err
}

// flip opens (on) or closes a window of the refresh gen placed it in,
// unless a later retarget or a stop has placed another since.
func (c *Collector) flip(gen uint64, on bool) {
	c.life.Lock()
	defer c.life.Unlock()
	tr, ok, _ := c.life.Ready()
	if !ok || gen != c.duty.gen {
		return
	}
	if !on {
		// The window is over: a late start of it must not reopen it.
		c.duty.gen++
	}
	c.life.Fail(c.attach(tr, on))
}

// seed lists the threads of the -p processes, up to MaxTargets.
func (c *Collector) seed() []int {
	var tids []int
	for _, pid := range c.opt.PIDs {
		ents, err := os.ReadDir(filepath.Join(c.opt.Proc, strconv.Itoa(pid), "task"))
		if err != nil {
			continue // gone: normal
		}
		for _, e := range ents {
			if len(tids) == MaxTargets {
				return tids
			}
			if tid, err := strconv.Atoi(e.Name()); err == nil && tid > 0 {
				tids = append(tids, tid)
			}
		}
	}
	return tids
}

func add(m map[int]map[string]*counted, tid int, r *resolved, pid int, waker string, n, weight uint64) {
	byStack := m[tid]
	if byStack == nil {
		byStack = map[string]*counted{}
		m[tid] = byStack
	}
	key := r.sig
	if waker != "" {
		key = waker + "\x00" + key
	}
	if e := byStack[key]; e != nil {
		e.count += n
		e.weight += weight
		return
	}
	byStack[key] = &counted{r: r, pid: pid, waker: waker, count: n, weight: weight}
}

// resolve symbolizes the stack pair (kstack, ustack) of process pid, and
// the parked goroutine's stack gstack (all 0: none) the thread blocked for.
//
// A goroutine's frames come after the thread's, as if its stack went on
// below the scheduler's: kernel, the scheduler's frames on the thread's
// own stack (g0), then the goroutine's from where it parked
// (runtime.gopark) out to its entry. Innermost first, so the own frame is
// the goroutine's innermost frame of the program's code, the function
// that waited.
func (c *Collector) resolve(st *model.Stacks, pid int, kstack, ustack int32, gstack *[GoDepth]uint64) *resolved {
	c.used[kstack], c.used[ustack] = c.refresh, c.refresh
	k := resolveKey{pid: pid, kstack: kstack, ustack: ustack}
	if gstack != nil {
		k.gstack = *gstack
	}
	if r := c.cache[k]; r != nil {
		r.usedAt = c.refresh
		return r
	}
	r := &resolved{own: "", kernelFrames: 0, usedAt: c.refresh}
	if c.sym != nil {
		c.kernelFrames(st, r, kstack)
		var uf []symbolize.Frame
		if addrs := c.tracer().Stack(ustack); len(addrs) > 0 {
			if f, err := c.sym.User(pid, addrs, symbolize.StackAddresses); err == nil || len(f) == len(addrs) {
				uf = f
			}
		}
		// Every address of a goroutine's stack is a return address: the
		// first is where gopark's call to mcall returns to.
		if addrs := goFrames(gstack); len(addrs) > 0 {
			if f, err := c.sym.User(pid, addrs, symbolize.ReturnAddresses); err == nil || len(f) == len(addrs) {
				uf = append(uf, f...)
			}
		}
		c.userFrames(r, uf)
		r.noFP, _ = symbolize.NoFramePointers(uf)
	}
	c.keep(k, r)
	return r
}

// keep completes r and caches it under k.
func (c *Collector) keep(k resolveKey, r *resolved) {
	if len(r.frames) == 0 {
		r.frames = []string{"[unknown]"}
	}
	r.sig = strings.Join(r.frames, ";")
	if r.truncated != "" {
		// The same frames ending for another reason are another stack.
		r.sig += "\x00" + r.truncated
	}
	c.cache[k] = r
}

// kernelFrames puts the kernel stack kstack's names into r.
func (c *Collector) kernelFrames(st *model.Stacks, r *resolved, kstack int32) {
	addrs := c.tracer().Stack(kstack)
	if len(addrs) == 0 {
		return
	}
	kf, err := c.sym.Kernel(addrs, symbolize.StackAddresses)
	if errors.Is(err, symbolize.ErrKernelHidden) {
		st.KernelHidden = true
		return
	}
	kf = trimTracing(kf)
	for _, f := range kf {
		r.frames = append(r.frames, f.String())
	}
	r.kernelFrames = len(kf)
}

// userFrames appends the user frames uf to r and names its own frame: the
// innermost frame of the thread's own code that has a name. A frame no
// symbol names is shown as its object and offset, but WHY never says a
// thread blocks "in" an address.
func (c *Collector) userFrames(r *resolved, uf []symbolize.Frame) {
	for _, f := range uf {
		r.frames = append(r.frames, f.String())
	}
	for i := range uf {
		if !symbolize.Plumbing(uf[i]) && uf[i].Function != "" {
			r.own = uf[i].Function
			break
		}
	}
}

// resolveCapture unwinds and symbolizes a captured stack: the kernel's
// stack, then the user stack unwound from the registers and stack copy
// with the binaries' CFI (frame pointers where none covers a PC).
func (c *Collector) resolveCapture(st *model.Stacks, cp *Capture) *resolved {
	c.used[cp.KStack] = c.refresh
	c.unw.UnwindInto(&c.ust, cp.PID, unwind.Regs{IP: cp.IP, SP: cp.SP, BP: cp.BP}, cp.Stack)
	k := resolveKey{pid: cp.PID, kstack: cp.KStack, ustack: capturedStack, why: c.ust.Reason}
	copy(k.pcs[:], c.ust.PCs)
	if r := c.cache[k]; r != nil {
		r.usedAt = c.refresh
		return r
	}
	r := &resolved{usedAt: c.refresh}
	if c.sym != nil {
		c.kernelFrames(st, r, cp.KStack)
		exact := c.ust.Exact
		if uf, err := c.sym.UserExact(cp.PID, c.ust.PCs, exact); err == nil || len(uf) == len(c.ust.PCs) {
			c.userFrames(r, uf)
		}
	}
	if c.ust.Reason != unwind.End {
		r.truncated = c.ust.Why()
	}
	c.keep(k, r)
	return r
}

// freeStale frees the kernel's stacks no count referred to in the window,
// and forgets what was resolved from them (an ID may then be reused).
func (c *Collector) freeStale() {
	for id, at := range c.used {
		if c.refresh-at < c.opt.Window {
			continue
		}
		c.tracer().FreeStack(id)
		delete(c.used, id)
		for k := range c.cache {
			if k.kstack == id || k.ustack == id {
				delete(c.cache, k)
			}
		}
	}
	// Parked goroutines' stacks are no stack IDs of their own: one
	// scheduler stack, in use all along, may come with any number of them
	// over time, so each resolved stack is also forgotten a window after
	// its last use.
	for k, r := range c.cache {
		if c.refresh-r.usedAt >= c.opt.Window {
			delete(c.cache, k)
		}
	}
}

// goFrames is the goroutine stack gstack's addresses, up to the first 0.
func goFrames(gstack *[GoDepth]uint64) []uint64 {
	if gstack == nil {
		return nil
	}
	n := 0
	for n < len(gstack) && gstack[n] != 0 {
		n++
	}
	return gstack[:n]
}

// targetPIDs lists the processes of c.targets, as snap has them, and the
// -p processes.
//
// A snapshot may hold every thread of a big host: the targets are looked up
// sorted, and the scan stops once all are found.
func (c *Collector) targetPIDs(snap *model.Snapshot) []int {
	pids := slices.Clone(c.opt.PIDs)
	tids := slices.Sorted(slices.Values(c.targets))
	left := len(tids)
	for i := 0; i < len(snap.Threads) && left > 0; i++ {
		t := &snap.Threads[i]
		if _, ok := slices.BinarySearch(tids, t.TID); !ok {
			continue
		}
		left--
		if !slices.Contains(pids, t.PID) {
			pids = append(pids, t.PID)
		}
	}
	return pids
}

// followGo registers with the tracer each of pids that runs a Go program
// whose runtime layout is known, the first time it is among the targets'
// processes (the symbolizer reads each executable once), and forgets the
// processes no target is in any more: the kernel looks only the targets'
// processes up.
func (c *Collector) followGo(pids []int) {
	tr := c.tracer()
	if c.sym == nil || tr == nil {
		return
	}
	for pid := range c.goPIDs {
		if !slices.Contains(pids, pid) {
			_ = tr.SetGoProcess(pid, nil)
			delete(c.goPIDs, pid)
		}
	}
	for _, pid := range pids {
		if _, seen := c.goPIDs[pid]; seen || pid <= 0 || len(c.goPIDs) >= MaxGoProcesses {
			continue
		}
		rt, err := c.sym.GoProcess(pid)
		if err == nil {
			err = tr.SetGoProcess(pid, &rt)
		}
		c.goPIDs[pid] = err
	}
}

// sampling is how each of c.targets is to be sampled, from its rate in
// snap (a thread not in it did not switch: every event is taken), with
// the programs attached for 1/k of the refresh: the budget's samples come
// from the events of that part.
func (c *Collector) sampling(snap *model.Snapshot, k int) []Target {
	rates := make(map[int]float64, len(c.targets))
	for i := range snap.Threads {
		rates[snap.Threads[i].TID] = snap.Threads[i].VoluntaryPerSec
	}
	out := make([]Target, len(c.targets))
	for i, tid := range c.targets {
		out[i] = Target{TID: tid, Every: sampleEvery(rates[tid]/float64(k), len(c.targets), c.opt.Budget)}
	}
	return out
}

// choose picks the next targets: the focused thread, then every thread of
// the -p processes, or else the hottest blocking threads.
func (c *Collector) choose(snap *model.Snapshot) []int {
	var tids []int
	if f := int(c.focus.Load()); f > 0 {
		tids = append(tids, f)
	}
	hot := 0
	for i := range snap.Threads {
		if len(tids) >= MaxTargets {
			break
		}
		t := &snap.Threads[i]
		switch {
		case len(c.opt.PIDs) > 0:
			if !slices.Contains(c.opt.PIDs, t.PID) {
				continue
			}
		case hot >= c.opt.Hot || !t.HotBlocking():
			continue
		}
		if !slices.Contains(tids, t.TID) {
			tids = append(tids, t.TID)
			hot++
		}
	}
	// Threads of -p processes that did not switch this interval stay
	// targets while there is room: a quiet thread may block again.
	if len(c.opt.PIDs) > 0 {
		for _, tid := range c.targets {
			if len(tids) >= MaxTargets {
				break
			}
			if !slices.Contains(tids, tid) {
				tids = append(tids, tid)
			}
		}
	}
	return tids
}

// trimTracing drops the innermost kernel frames that are the tracer's own
// (the BPF program and the tracepoint's trampoline), which every stack
// would otherwise start with.
func trimTracing(kf []symbolize.Frame) []symbolize.Frame {
	for len(kf) > 0 {
		n := kf[0].Function
		if !strings.HasPrefix(n, "bpf_prog_") && !strings.HasPrefix(n, "bpf_trace_run") && !strings.HasPrefix(n, "__bpf_trace_") && !strings.HasPrefix(n, "__traceiter_") {
			break
		}
		kf = kf[1:]
	}
	return kf
}
