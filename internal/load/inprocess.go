package load

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxtop/ctxtop/internal/cpulist"
)

// stopGrace is how long Stop lets a side finish its round trip before it
// forces the issue (kills a stuck child).
const stopGrace = 100 * time.Millisecond

// localRun is a workload running in this process. Only the workload
// process (runner.go) starts one: its threads must not share a monitor's
// Go runtime, whose own threads they would keep waking.
type localRun struct {
	cfg Config
	// counts are the pairs' (pool's, poller's threads') progress counters,
	// in memory the parent process reads too.
	counts []*atomic.Uint64
	pairs  []*pair
	// threads are the workload's OS threads, in this process or the child.
	threads []*thread
	// whole0 is set in goroutine mode: counters over the whole process.
	whole0 Counters

	start    time.Time
	startNs  int64        // CLOCK_MONOTONIC, comparable across processes
	endNanos atomic.Int64 // CLOCK_MONOTONIC at the end of the last pair
	wg       sync.WaitGroup
	done     chan struct{}
	timer    *time.Timer
	stopOnce sync.Once
	summary  Summary
	// haltMu orders halt (from the duration timer, among others) against
	// closing the pairs' fds: a wake-up written to a closed, reused fd
	// would land in someone else's file.
	haltMu sync.Mutex
	closed bool

	ipi0, ipi1 ipiCounts
	ipiOK      bool
	hwErr      error
}

// pair is one ping-pong pair, or one thread of a pool or poller.
type pair struct {
	count *atomic.Uint64
	stop  atomic.Bool
	quota uint64 // round trips for this pair; 0 = no limit
	impl  pairImpl
}

// pairImpl is a mode's two sides.
type pairImpl interface {
	// sides are the thread bodies run on locked OS threads; a goroutineUnit
	// returns none.
	sides() []sideSpec
	// wake unblocks both sides after stop is set; called more than once.
	wake()
	// force unblocks a side that wake could not (a stuck child).
	force()
	// close releases fds after both sides returned.
	close()
}

// goroutineUnit is a pair whose sides are goroutines (Info.Goroutines):
// it has no threads of its own and runs from start.
type goroutineUnit interface {
	run(p *pair, gate <-chan struct{})
}

// walker is a pair whose sides walk a working set.
type walker interface{ walks() [2]*workingSet }

// sideSpec is one side of a pair on its own locked OS thread.
type sideSpec struct {
	name  string
	cpu   int
	setup func() error // before the start gate, after naming and pinning
	body  func()
	// finish runs after body on the same thread, after the thread's own
	// counters are read.
	finish func(t *thread)
	// other is a thread elsewhere (the child process's) that setup and
	// finish fill in.
	other *thread
}

// thread is one workload OS thread, here or in the child.
type thread struct {
	pid, tid int
	c0, c1   Counters
	err      error
	hw       *hwSet
	h0, h1   [3]uint64
	hwErr    error
}

// units is how many independent counters a run of cfg needs.
func (cfg Config) units() int {
	if cfg.Mode.Info().Threaded {
		return cfg.Threads
	}
	return max(cfg.Pairs, 1)
}

// startLocal starts cfg (normalized) in this process with its progress in
// counts (cfg.units() of them), in the workload process, which is set up
// for raw blocking calls (see futexWait). It returns once every side is set up
// (threads named and pinned, the child process started), so an error
// there comes back from it.
func startLocal(cfg Config, counts []*atomic.Uint64) (*localRun, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	if len(counts) != cfg.units() {
		return nil, fmt.Errorf("%d progress counters for %d pairs or threads", len(counts), cfg.units())
	}
	r := &localRun{cfg: cfg, counts: counts, done: make(chan struct{})}
	info := cfg.Mode.Info()
	newUnit := info.prepare(cfg)
	for i := range cfg.units() {
		p := &pair{count: counts[i]}
		if !info.Threaded {
			p.quota = share(cfg.RoundTrips, cfg.Pairs, i)
		}
		impl, err := newUnit(p)
		if err != nil {
			r.abort()
			return nil, err
		}
		p.impl = impl
		r.pairs = append(r.pairs, p)
	}

	gate := newStartGate()
	var ready sync.WaitGroup
	var aborted atomic.Bool
	for _, p := range r.pairs {
		for _, s := range p.impl.sides() {
			t := &thread{pid: os.Getpid()}
			r.threads = append(r.threads, t)
			ready.Add(1)
			r.wg.Add(1)
			go r.runSide(s, t, &ready, gate, &aborted)
			if s.other != nil {
				r.threads = append(r.threads, s.other)
			}
		}
	}
	ready.Wait()
	var errs []error
	for _, t := range r.threads {
		if t.err != nil {
			errs = append(errs, t.err)
		}
	}
	if len(errs) > 0 {
		aborted.Store(true)
		gate.open()
		r.wg.Wait()
		r.abort()
		return nil, errs[0]
	}
	r.openHW()
	if info.Goroutines {
		if len(cfg.CPUs) > 0 {
			// Before the goroutines start, so that no thread the runtime
			// wakes for them runs elsewhere.
			if err := pinProcess(cfg.CPUs); err != nil {
				aborted.Store(true)
				gate.open()
				r.abort()
				return nil, fmt.Errorf("pinning the process to %s: %w", cpulist.Format(cfg.CPUs), err)
			}
		}
		r.whole0, _ = readProcessCounters(os.Getpid())
		for _, p := range r.pairs {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				p.impl.(goroutineUnit).run(p, gate.ch)
				r.markEnd()
			}()
		}
	}
	r.ipi0, r.ipiOK = readIPIs()
	r.start = time.Now()
	r.startNs = monoNanos()
	gate.open()
	if cfg.Duration > 0 {
		r.timer = time.AfterFunc(cfg.Duration, r.halt)
	}
	go func() {
		r.wg.Wait()
		var ok bool
		r.ipi1, ok = readIPIs()
		r.ipiOK = r.ipiOK && ok
		close(r.done)
	}()
	return r, nil
}

// openHW opens hardware counters on every workload thread and reads their
// starting values; the first failure says why for all.
func (r *localRun) openHW() {
	for _, t := range r.threads {
		if r.hwErr != nil {
			return
		}
		h, err := openHW(t.tid)
		if err != nil {
			r.hwErr = err
			break
		}
		t.hw = h
		t.h0, t.hwErr = h.read()
	}
	if r.hwErr != nil {
		for _, t := range r.threads {
			if t.hw != nil {
				t.hw.close()
				t.hw = nil
			}
		}
	}
}

// ipiCounts are the system's interprocessor interrupts that carry a
// wake-up to another CPU, summed over CPUs: RES (rescheduling: the target
// must run its scheduler) and CAL (function call: since Linux 5.8 a
// wake-up for a CPU that shares no cache with the waker is queued on the
// target's wake list and sent this way). Which one a cross-CPU wake-up
// uses depends on the CPUs' topology, so both are counted.
type ipiCounts struct{ res, cal uint64 }

// readIPIs reads RES and CAL from /proc/interrupts; ok is false when the
// file cannot be read or parsed (CAL may be absent on other
// architectures).
func readIPIs() (ipiCounts, bool) {
	in, err := selfProc.Interrupts()
	if err != nil {
		return ipiCounts{}, false
	}
	return ipiCounts{res: in.ReschedIPIs, cal: in.CallIPIs}, true
}

// startGate holds every side until all are set up. The sides wait in
// FUTEX_WAIT on one word and one FUTEX_WAKE starts them all at once (ch is
// goroutine mode's: its goroutines wait on it); a channel would instead hand each
// locked thread its goroutine through the Go scheduler, one after the
// other, and with a thousand pool threads already spinning on two CPUs
// the last one started minutes late (measured: a 1 s run of 1,024
// threads took 160 s).
type startGate struct {
	word atomic.Uint32
	ch   chan struct{}
	once sync.Once
}

func newStartGate() *startGate { return &startGate{ch: make(chan struct{})} }

func (g *startGate) wait() {
	for g.word.Load() == 0 {
		futexWait(&g.word, 0)
	}
}

func (g *startGate) open() {
	g.once.Do(func() {
		g.word.Store(1)
		futexWake(&g.word, wakeAll)
		close(g.ch)
	})
}

// share splits n round trips over k pairs, the remainder to the first ones.
func share(n uint64, k, i int) uint64 {
	if n == 0 {
		return 0
	}
	q := n / uint64(k)
	if uint64(i) < n%uint64(k) {
		q++
	}
	if q == 0 {
		// More pairs than round trips: a pair with nothing to do would run
		// forever under a zero (unlimited) quota.
		q = 1
	}
	return q
}

// runSide runs one side on its own OS thread. The goroutine never unlocks
// the thread, so when it returns the runtime destroys the thread instead
// of handing a pinned, renamed thread back to the pool.
func (r *localRun) runSide(s sideSpec, t *thread, ready *sync.WaitGroup, gate *startGate, aborted *atomic.Bool) {
	runtime.LockOSThread()
	if gettid() == os.Getpid() {
		// The main thread can never exit: the runtime would wedge it for
		// good, renamed and pinned, and every thread it later creates would
		// inherit the pinning. Hold it while a new goroutine, which then
		// cannot land on it, locks a thread of its own.
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			close(locked)
			r.runLocked(s, t, ready, gate, aborted)
		}()
		<-locked
		runtime.UnlockOSThread()
		return
	}
	r.runLocked(s, t, ready, gate, aborted)
}

func (r *localRun) runLocked(s sideSpec, t *thread, ready *sync.WaitGroup, gate *startGate, aborted *atomic.Bool) {
	defer r.wg.Done()
	t.tid = gettid()
	t.err = func() error {
		if err := setThreadName(s.name); err != nil {
			return err
		}
		if s.cpu >= 0 {
			if err := pinSelf(s.cpu); err != nil {
				return err
			}
		}
		if s.setup != nil {
			if err := s.setup(); err != nil {
				return err
			}
		}
		c, err := readSelfCounters()
		t.c0 = c
		return err
	}()
	ready.Done()
	gate.wait()
	if t.err != nil || aborted.Load() {
		return
	}
	s.body()
	r.markEnd()
	t.c1, t.err = readSelfCounters()
	if t.hw != nil && t.hwErr == nil {
		t.h1, t.hwErr = t.hw.read()
	}
	if s.finish != nil {
		s.finish(t)
	}
}

func (r *localRun) markEnd() {
	now := monoNanos()
	for {
		old := r.endNanos.Load()
		if old >= now || r.endNanos.CompareAndSwap(old, now) {
			return
		}
	}
}

// halt asks every pair to stop and wakes their sides; it does not wait.
func (r *localRun) halt() {
	r.haltMu.Lock()
	defer r.haltMu.Unlock()
	if r.closed {
		return
	}
	for _, p := range r.pairs {
		p.stop.Store(true)
		p.impl.wake()
	}
}

// abort releases what a failed start set up.
func (r *localRun) abort() {
	r.halt()
	for _, p := range r.pairs {
		p.impl.force()
	}
	r.closePairs()
}

func (r *localRun) closePairs() {
	r.haltMu.Lock()
	defer r.haltMu.Unlock()
	r.closed = true
	for _, p := range r.pairs {
		p.impl.close()
	}
	for _, t := range r.threads {
		if t.hw != nil {
			t.hw.close()
			t.hw = nil
		}
	}
}

// Done is closed when the run ends: its duration or round trips reached,
// or after Stop.
func (r *localRun) Done() <-chan struct{} { return r.done }

func (r *localRun) total() uint64 {
	var n uint64
	for _, c := range r.counts {
		n += c.Load()
	}
	return n
}

// tasks are the workload's threads and processes other than this one.
func (r *localRun) tasks() (threads []Task, pids []int) {
	for _, t := range r.threads {
		threads = append(threads, Task{PID: t.pid, TID: t.tid})
		if t.pid != os.Getpid() {
			pids = append(pids, t.pid)
		}
	}
	return threads, pids
}

// Stop ends the run, waits for its threads and child, and returns the
// summary. It returns within about stopGrace even if a side is stuck, and
// every later call returns the same summary.
func (r *localRun) Stop() Summary {
	r.stopOnce.Do(func() {
		if r.timer != nil {
			r.timer.Stop()
		}
		r.halt()
		select {
		case <-r.done:
		case <-time.After(stopGrace):
			for _, p := range r.pairs {
				p.impl.force()
			}
			<-r.done
		}
		r.summary = r.summarize()
		r.closePairs()
	})
	return r.summary
}

func (r *localRun) summarize() Summary {
	end := r.endNanos.Load()
	if end == 0 {
		end = r.startNs
	}
	wall := time.Duration(end - r.startNs)
	cfg := r.cfg
	s := Summary{
		Mode:      cfg.Mode,
		CPUs:      append([]int{}, cfg.CPUs...),
		Pairs:     cfg.Pairs,
		DurationS: wall.Seconds(),
	}
	info := cfg.Mode.Info()
	*info.count(&s) = r.total()
	s.SwitchesCounted = CountedWorkload
	var d Counters
	d.HasMigrations, d.HasSchedstat = true, true
	if info.Goroutines {
		s.SwitchesCounted = CountedProcess
		c1, err := readProcessCounters(os.Getpid())
		if err != nil {
			d.HasMigrations = false
			s.SwitchesUnknown = "the workload process's counters could not be read: " + err.Error()
		} else {
			d = c1.sub(r.whole0)
			// Threads that exited in between took their counts with them.
			if c1.Voluntary < r.whole0.Voluntary {
				d.Voluntary = 0
			}
			if c1.Involuntary < r.whole0.Involuntary {
				d.Involuntary = 0
			}
			if c1.Migrations < r.whole0.Migrations {
				d.Migrations = 0
			}
		}
	}
	var hw [3]uint64
	hwOK := r.hwErr == nil && len(r.threads) > 0
	userOnly := false
	for _, t := range r.threads {
		if t.err != nil {
			d.HasMigrations, d.HasSchedstat = false, false
			// A sum missing a thread would pass for the whole.
			s.SwitchesUnknown = "a workload thread's counters could not be read: " + t.err.Error()
			continue
		}
		d = d.add(t.c1.sub(t.c0))
		if t.hw == nil || t.hwErr != nil {
			hwOK = false
			if t.hwErr != nil && r.hwErr == nil {
				r.hwErr = t.hwErr
			}
			continue
		}
		userOnly = userOnly || t.hw.userOnly
		for i := range hw {
			hw[i] += t.h1[i] - t.h0[i]
		}
	}
	s.SwitchesVoluntary, s.SwitchesInvoluntary = d.Voluntary, d.Involuntary
	units := s.Units()
	if d.HasMigrations {
		m := d.Migrations
		s.Migrations = &m
		if units > 0 {
			v := float64(m) / float64(units)
			s.MigrationsPerRoundTrip = &v
		}
	}
	if r.ipiOK && r.ipi1.res >= r.ipi0.res && r.ipi1.cal >= r.ipi0.cal {
		res, cal := r.ipi1.res-r.ipi0.res, r.ipi1.cal-r.ipi0.cal
		s.ReschedIPIs, s.CallIPIs = &res, &cal
		if units > 0 {
			v := float64(res) / float64(units)
			w := float64(res+cal) / float64(units)
			s.ReschedIPIsPerRoundTrip, s.WakeupIPIsPerRoundTrip = &v, &w
		}
	}
	switch {
	case hwOK && units > 0:
		s.HW = &HWCounts{
			Instructions: hw[0], Cycles: hw[1], CacheMisses: hw[2],
			InstructionsPerRoundTrip: float64(hw[0]) / float64(units),
			CyclesPerRoundTrip:       float64(hw[1]) / float64(units),
			CacheMissesPerRoundTrip:  float64(hw[2]) / float64(units),
			UserOnly:                 userOnly,
		}
	case r.hwErr != nil:
		s.HWNote = r.hwErr.Error()
	case len(r.threads) == 0:
		s.HWNote = "goroutine mode has no threads of its own to count on"
	}
	if s.SwitchesUnknown != "" {
		s.SwitchesVoluntary, s.SwitchesInvoluntary = 0, 0
	}
	if s.RoundTrips > 0 {
		s.NsPerRoundTrip = float64(wall.Nanoseconds()) * float64(s.Pairs) / float64(s.RoundTrips)
		if s.SwitchesUnknown == "" {
			s.SwitchesPerRoundTrip = float64(s.Switches()) / float64(s.RoundTrips)
		}
	}
	s.NsPerSwitch = NsPerSwitch(s.NsPerRoundTrip, s.SwitchesPerRoundTrip)
	r.summarizeWalk(&s)
	if info.figures != nil {
		info.figures(&s, cfg, wall.Seconds(), &d)
	}
	return s
}

// summarizeWalk fills the working-set figures: each pair's two hot walks
// are the part of its round trip that is not the hand-off.
func (r *localRun) summarizeWalk(s *Summary) {
	if r.cfg.WorkingSet == 0 {
		return
	}
	s.WorkingSet = r.cfg.WorkingSet
	var sum float64
	k := 0
	for _, p := range r.pairs {
		w, ok := p.impl.(walker)
		if !ok {
			continue
		}
		ws := w.walks()
		if ws[0] == nil || ws[1] == nil {
			continue
		}
		sum += ws[0].hotNs + ws[1].hotNs
		k++
	}
	if k == 0 {
		return
	}
	s.WalkNsPerRoundTrip = sum / float64(k)
	if s.NsPerRoundTrip > 0 {
		s.NsPerRoundTripNet = s.NsPerRoundTrip - s.WalkNsPerRoundTrip
	}
}

// readProcessCounters sums the counters over every thread of pid.
func readProcessCounters(pid int) (Counters, error) {
	dir := selfProc.Path(strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Counters{}, err
	}
	sum := Counters{HasMigrations: true, HasSchedstat: true}
	n := 0
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		c, err := ReadCounters("/proc", pid, tid)
		if err != nil {
			continue // the thread exited between the listing and the read
		}
		sum = sum.add(c)
		n++
	}
	if n == 0 {
		return Counters{}, errors.New("no readable threads in " + dir)
	}
	return sum, nil
}

// ProcessCounters sums the counters over every thread of process pid,
// live ones only: a thread that exited took its counts with it.
func ProcessCounters(pid int) (Counters, error) { return readProcessCounters(pid) }
