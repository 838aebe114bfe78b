package taskiter

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
)

// Stepping over idle processes (ctxtop_walk in bpf/taskiter.bpf.c): two
// hooks on the scheduler's wake-up tracepoints mark a process when one of
// its threads is woken, and a walk leaves the records of a process nobody
// woke as they are without visiting its threads. The walk's cost is then
// the processes' leaders and the threads that may have run, not every
// thread; but the hooks run at every wake-up on the host, some tens of ns
// each, so they are attached only while the walk finds enough threads to
// gain by it, and dropped again when the host wakes threads so often that
// they cost it more than the walk saves.

// DefaultSkipAbove is the least number of threads for which a walk
// attaches the hooks and steps over idle threads: below it, a full walk
// costs some 0.75 ms or less (0.15 µs a thread), not worth a cost to every
// wake-up on the host.
const DefaultSkipAbove = 5000

const (
	// hookNs and stepNs weigh the hooks' cost to the host against what
	// they save the walk: a hook's run (about 40 ns on the 2-vCPU guest,
	// BenchmarkHookOverheadPinnedFutex) against stepping over one idle
	// thread (0.15 µs there, BenchmarkWalk100kIdle's count-ms).
	hookNs = 40
	stepNs = 150
	// dearPasses is how many walks in a row the hooks must cost more than
	// they save before they are detached; retryPasses how many full walks
	// follow before they are tried again.
	dearPasses  = 3
	retryPasses = 30
	// scrubPasses is in how many walks a skipping walk looks at every
	// thread anyway, a scrubPasses-th of them in each (SCRUB in the
	// program). On Linux 6.18 (the 2-vCPU guest) a BPF program on
	// sched_switch was seen to run for one fewer of a kernel thread's
	// switches onto a CPU than its pcount moved, about once in a few
	// hundred, with no recursion miss counted; so a thread's run can go
	// unmarked, rarely, and this bounds how long its record can then
	// lag: scrubPasses refreshes.
	scrubPasses = 32
)

// skipArch is whether this machine's memory order is the one ctxtop_walk's
// exactness argument rests on: locked instructions are full barriers and
// loads are not reordered with loads (x86). Elsewhere every walk is full.
const skipArch = runtime.GOARCH == "amd64"

// Offsets in the control element (struct walk_ctl).
const (
	ctlFull    = 0
	ctlWalked  = 4
	ctlSkipped = 8
	ctlPhase   = 12
	ctlMoves   = 16
	ctlShifted = 20
	ctlSize    = 24
	// moveSize is an entry of the moves list (struct move).
	moveSize = 16
	// wakeCountSize is a CPU's element of the wakeups map: a cache line.
	wakeCountSize = 64
)

// skipState is the Iter's memory of the hooks.
type skipState struct {
	// above is the threshold in threads, 0 for never; force attaches
	// the hooks whatever the count and cost (tests).
	above int
	force bool
	// hooks are the attached programs, nil while detached.
	hooks []*bpfutil.RawLink
	// full asks the next walk to visit every process: the first, and the
	// first after the hooks were attached or missed a wake-up.
	full bool
	// misses is the hooks' recursion misses when last read.
	misses uint64
	// wakes is the hooks' run count when last read; dear counts walks in
	// a row that it outweighed; retry counts down the walks before the
	// hooks are tried again after they cost too much, or failed.
	wakes       uint64
	dear, retry int
	// last is how many threads the last walk found, skipped how many it
	// neither visited nor looked at; phase is which residue of the slots
	// the coming walk looks at anyway.
	last, skipped, phase int
	// stepped is the time, at stepNs a thread, that the walks since Open
	// spent stepping through threads while the hooks were not loaded:
	// they are loaded once it reaches loadNs (see steer).
	stepped int64
	// loading is the load of the skipping walk and its hooks under way
	// in the background, nil when none is. preload is set from Open to
	// the first walk on a host big enough to skip on, for a caller that
	// stays: that walk waits for the load and attaches the hooks first.
	loading chan skipLoad
	preload bool
	// wait is how long that first walk waits: preloadWait, less in
	// tests of a load that outlasts it.
	wait time.Duration
}

// skipLoad is what a background load of the skipping walk gave.
type skipLoad struct {
	progs skipPrograms
	err   error
}

// loadNs is about what loading the skipping walk and its hooks costs,
// once: the verifier's 40-50 ms over the walk's loops on the 2-vCPU
// guest (up to a second of wall time on a loaded one), in one system call
// that cannot be split. It is never paid inside a walk: the load runs on a
// goroutine of its own while the plain walk serves, and the first walk
// after it is done attaches the hooks. When it starts is a matter of
// what the caller means to do (Options.Passes). One that stays (a
// monitor) on a host of SkipAbove threads or more starts it at Open, and
// its first walk waits for it: the walks after the first then skip, as
// they would an hour later, where a plain walk costs two to four times
// as much (3 against 1.2 ms at 10,000 threads, 20 against 6 at 100,000).
// A caller whose passes would not win it back, a short batch run, loads it
// only once the walks so far have spent as much stepping through threads
// as loadNs, as one rents skis until the rent paid would have bought
// them; it then never pays it at all.
const loadNs = 50_000_000

// preloadWait bounds how long the first walk waits for the skipping
// walk's load: some 50 ms on a quiet 2-vCPU guest, but up to a second on
// a loaded one, which a start should not wait. Past it the first walk is a
// plain one; the hooks, loaded alone and attached at Open (attachEarly),
// mark already, and the plain walks keep the marks, so the first walk
// after the load is done skips as the later ones do.
const preloadWait = 150 * time.Millisecond

// preloads reports whether a caller that means to make passes walks
// (0: as many as it lasts) on a host of threads threads loads the
// skipping walk at once.
func (it *Iter) preloads(threads, passes int) bool {
	s := &it.skip
	return skipArch && s.above > 0 && it.opts.PIDs == nil && threads >= s.above &&
		(passes == 0 || int64(passes)*int64(threads)*stepNs >= loadNs)
}

// Skipping reports whether the last walk stepped over the processes
// nobody woke since the walk before, rather than visit every thread.
func (it *Iter) Skipping() bool { return !it.ranFull }

// Skipped is how many threads the last walk neither visited nor looked
// at, their records kept from the walk before.
func (it *Iter) Skipped() int { return it.skip.skipped }

// Shifted is how many records the last walk copied up to make room for
// threads born before them (ctxtop_shift): memory the walk moved, not
// threads it visited.
func (it *Iter) Shifted() int { return int(binary.LittleEndian.Uint32(it.ctl[ctlShifted:])) }

// steer attaches or detaches the hooks for the coming walk and tells it
// whether to visit every process.
func (it *Iter) steer() {
	s := &it.skip
	want := skipArch && s.above > 0 && s.retry == 0
	if want && !s.force {
		// Hysteresis: attached at the threshold, kept down to 3/4 of
		// it, so a host about the threshold does not flap.
		limit := s.above
		if s.hooks != nil {
			limit = s.above * 3 / 4
		}
		want = s.last >= limit || s.preload
		if want && it.progs.Walk == nil {
			// Loaded in the background (see loadNs): until it is done,
			// plain walks.
			if s.loading == nil && s.stepped >= loadNs {
				it.startLoad()
			}
			var wait time.Duration
			if s.preload {
				wait = s.wait
			}
			it.collectLoad(wait)
			// Hooks attached at Open (attachEarly) stay on while the
			// load goes on: the plain walks keep the marks for it.
			want = it.progs.Walk != nil || (s.hooks != nil && s.loading != nil)
		}
	}
	if want && s.hooks != nil && it.progs.Walk == nil {
		// Hooks on early (attachEarly), whatever the count said: the
		// load, once done, serves at once.
		it.collectLoad(0)
	}
	s.preload = false
	if s.retry > 0 {
		s.retry--
	}
	switch {
	case want && s.hooks == nil:
		if err := it.attach(); err != nil {
			// No skipping, never a failure: a full walk is exact.
			s.retry = retryPasses
		}
		s.full = true
	case !want && s.hooks != nil:
		it.detach()
	}
	if s.hooks != nil {
		// A wake-up the hooks missed (a tracing program already running
		// on that CPU) would leave a process unmarked: visit them all.
		var misses uint64
		for _, p := range []*ebpf.Program{it.progs.Wakeup, it.progs.WakeupNew} {
			st, err := p.Stats()
			if err != nil {
				s.full = true
				continue
			}
			misses += st.RecursionMisses
		}
		if misses != s.misses {
			s.misses = misses
			s.full = true
		}
	}
	it.ranFull = s.full || s.hooks == nil || it.progs.Walk == nil
	s.phase = (s.phase + 1) % scrubPasses
	binary.LittleEndian.PutUint32(it.ctl[ctlPhase:], uint32(s.phase))
	var full uint32
	if it.ranFull {
		full = 1
	}
	binary.LittleEndian.PutUint32(it.ctl[ctlFull:], full)
	// The plain walk moves nothing and does not say so.
	binary.LittleEndian.PutUint32(it.ctl[ctlMoves:], 0)
	binary.LittleEndian.PutUint32(it.ctl[ctlShifted:], 0)
}

// account reads what the walk that found n threads skipped, and drops
// the hooks when the wake-ups they ran for since the walk before cost the
// host more than stepping over the threads saved the walk.
func (it *Iter) account(n int) {
	s := &it.skip
	s.last, s.skipped, s.full = n, 0, false
	if it.progs.Walk == nil {
		s.stepped += int64(n) * stepNs
	}
	if s.hooks == nil {
		return
	}
	if k := int(binary.LittleEndian.Uint32(it.ctl[ctlSkipped:])); k <= n {
		s.skipped = k
	}
	var wakes uint64
	for i := 0; i+8 <= len(it.wakes); i += wakeCountSize {
		wakes += binary.LittleEndian.Uint64(it.wakes[i:])
	}
	delta := wakes - s.wakes
	s.wakes = wakes
	if it.ranFull || s.force {
		return
	}
	if delta > uint64(s.skipped)*stepNs/hookNs {
		s.dear++
	} else {
		s.dear = 0
	}
	if s.dear >= dearPasses {
		it.detach()
		s.dear, s.retry = 0, retryPasses
	}
}

// attach attaches both hooks, or neither, loading them and the skipping
// walk the first time.
func (it *Iter) attach() error {
	if err := it.loadSkip(); err != nil {
		return err
	}
	for _, p := range []*ebpf.Program{it.progs.Wakeup, it.progs.WakeupNew} {
		l, err := object.Attach(p)
		if err != nil {
			it.detach()
			return err
		}
		it.skip.hooks = append(it.skip.hooks, l)
	}
	return nil
}

// loadSkip loads the skipping walk and its hooks over the maps loaded
// already, once for the maps' life, waiting for a load under way in the
// background if there is one: the verifier takes some 40 ms over
// ctxtop_walk's nested loops, a cost only a host big enough to skip on,
// and a monitor that stays, pays.
func (it *Iter) loadSkip() error {
	if it.progs.Walk == nil && it.skip.loading == nil {
		it.startLoad()
	}
	if err := it.collectLoad(-1); err != nil {
		return err
	}
	if it.progs.Walk == nil {
		return errors.New("the skipping walk did not load")
	}
	return nil
}

// startLoad starts loading the skipping walk and its hooks on a goroutine
// of its own. It shares nothing with the walks made meanwhile but the maps,
// which it only names, and the BTF cache, which is safe for concurrent use;
// a reload of the maps (load) waits for it and throws its programs away.
//
// With the hooks loaded already (attachEarly) it loads the walk alone.
func (it *Iter) startLoad() {
	spec, types, o := it.spec, it.types, it.objs
	hooked := it.progs.Wakeup != nil
	done := make(chan skipLoad, 1)
	it.skip.loading = done
	go func() {
		var r skipLoad
		opts, err := loadOptions(types, &o)
		switch {
		case err != nil:
		case hooked:
			var walk struct {
				Walk *ebpf.Program `ebpf:"ctxtop_walk"`
			}
			err = spec.LoadAndAssign(&walk, opts)
			r.progs.Walk = walk.Walk
		default:
			err = spec.LoadAndAssign(&r.progs, opts)
		}
		r.err = err
		done <- r
	}()
}

// loadOptions loads the programs over the maps o, loaded already.
func loadOptions(types *btf.Cache, o *walkObjects) (*ebpf.CollectionOptions, error) {
	kernel, err := types.Kernel()
	if err != nil {
		return nil, err
	}
	return &ebpf.CollectionOptions{
		Programs: ebpf.ProgramOptions{KernelTypes: kernel},
		Cache:    types,
		MapReplacements: map[string]*ebpf.Map{
			taskiterMapRecs: o.Recs, taskiterMapChanged: o.Changed, taskiterMapTargets: o.Targets,
			taskiterMapControl: o.Control, taskiterMapDirty: o.Dirty, taskiterMapDirtyTids: o.DirtyTIDs,
			taskiterMapSpans: o.Spans, taskiterMapWakeups: o.Wakeups, taskiterMapScratch: o.Scratch,
			taskiterMapMoves: o.Moves,
		},
	}, nil
}

// attachEarly loads the hooks alone (a few ms: they have no loops) and
// attaches them before the first walk, for a caller that preloads the
// skipping walk. The plain walks made while the skipping walk loads keep
// the marks (ctxtop_walk_all), so its first run after the load is done
// steps over what nobody woke instead of visiting every process: on a
// loaded host, where the load outlasts the first walk's wait, that visit
// was a pass two to three times the steady one. It fails quietly: the
// hooks are then attached once the load is done, as without it.
func (it *Iter) attachEarly() {
	opts, err := loadOptions(it.types, &it.objs)
	if err != nil {
		return
	}
	var hooks struct {
		Wakeup    *ebpf.Program `ebpf:"ctxtop_wakeup"`
		WakeupNew *ebpf.Program `ebpf:"ctxtop_wakeup_new"`
	}
	if err := it.spec.LoadAndAssign(&hooks, opts); err != nil {
		return
	}
	it.progs.Wakeup, it.progs.WakeupNew = hooks.Wakeup, hooks.WakeupNew
	for _, p := range []*ebpf.Program{hooks.Wakeup, hooks.WakeupNew} {
		l, err := object.Attach(p)
		if err != nil {
			it.detach()
			it.progs.Close()
			return
		}
		it.skip.hooks = append(it.skip.hooks, l)
	}
	// The first walk after the hooks are on visits every process.
	it.skip.full = true
}

// collectLoad takes the background load's programs once it is done,
// waiting for it up to wait (0: not at all; negative: as long as it takes),
// and returns its error. A load that failed is not tried again for
// retryPasses walks: no skipping, never a failure, as a full walk is
// exact.
func (it *Iter) collectLoad(wait time.Duration) error {
	s := &it.skip
	if s.loading == nil {
		return nil
	}
	var r skipLoad
	switch {
	case wait < 0:
		r = <-s.loading
	case wait == 0:
		select {
		case r = <-s.loading:
		default:
			return nil
		}
	default:
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case r = <-s.loading:
		case <-t.C:
			return nil
		}
	}
	s.loading = nil
	if r.err != nil {
		r.progs.Close()
		s.retry = retryPasses
		return r.err
	}
	if r.progs.Wakeup == nil {
		// The walk alone: the hooks were loaded early.
		r.progs.Wakeup, r.progs.WakeupNew = it.progs.Wakeup, it.progs.WakeupNew
	}
	it.progs = r.progs
	return nil
}

// discardLoad waits for a background load under way and closes what it
// loaded: the maps it was loaded over are about to go.
func (it *Iter) discardLoad() {
	if it.skip.loading == nil {
		return
	}
	r := <-it.skip.loading
	it.skip.loading = nil
	r.progs.Close()
}

// detach detaches the hooks; the walks after it visit every process.
func (it *Iter) detach() {
	for _, l := range it.skip.hooks {
		l.Close()
	}
	it.skip.hooks = nil
}

// pidMax is kernel.pid_max, which bounds the tgids the dirty bitmap
// covers; PID_MAX_LIMIT where it cannot be read. A process started after
// pid_max was raised past it is visited at every walk, which is exact.
func pidMax() int {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return maxID
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 || n > maxID {
		return maxID
	}
	return n
}
