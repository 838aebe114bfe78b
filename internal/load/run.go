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
)

// Config says what to run.
type Config struct {
	Mode Mode
	// CPUs: nil unpinned; [c] both sides on c; [a, b] ping on a, pong on b.
	// Syscall mode has one side and takes the first. Goroutine mode pins
	// the whole process, every thread, to the CPUs given (taskset -c on a
	// Go program), since the Go scheduler places goroutines; Stop undoes it.
	CPUs []int
	// Pairs is the number of independent ping-pong pairs; 0 means 1.
	Pairs int
	// Duration and RoundTrips end the run, whichever comes first; both 0
	// runs until Stop. RoundTrips counts over all pairs.
	Duration   time.Duration
	RoundTrips uint64
}

// Progress is a running workload's live state.
type Progress struct {
	Config     Config
	Elapsed    time.Duration
	RoundTrips uint64
	// NsPerRoundTrip is one pair's round-trip time over the last one to two
	// seconds, for a live display.
	NsPerRoundTrip float64
	// TIDs are the workload's threads in this process; empty in goroutine
	// mode, where the goroutines have no thread of their own.
	TIDs []int
	// ChildPID is the other side's process in process mode, else 0.
	ChildPID int
}

// Summary is a finished run's result; its JSON keys are ctxtop load -o json.
type Summary struct {
	Mode  Mode  `json:"mode"`
	CPUs  []int `json:"cpus"` // [] when unpinned
	Pairs int   `json:"pairs"`
	// DurationS is the wall time the pairs ran, in seconds.
	DurationS  float64 `json:"duration_s"`
	RoundTrips uint64  `json:"round_trips"`
	// NsPerRoundTrip is the time one pair takes for a round trip:
	// duration × pairs / round trips.
	NsPerRoundTrip float64 `json:"ns_per_round_trip"`
	// Switch counts are the kernel's, summed over the threads
	// SwitchesCounted names: the workload's own (both processes in process
	// mode), or in goroutine mode, whose goroutines have no threads of
	// their own, every thread of the process. Those are the runtime's: a
	// goroutine made runnable wakes an idle P's thread to look for work,
	// which finds the hand-off done and parks again in futex.
	SwitchesVoluntary    uint64  `json:"switches_voluntary"`
	SwitchesInvoluntary  uint64  `json:"switches_involuntary"`
	SwitchesCounted      string  `json:"switches_counted"`
	SwitchesPerRoundTrip float64 `json:"switches_per_round_trip"`
	// NsPerSwitch is the cost per kernel-counted switch: NsPerRoundTrip /
	// SwitchesPerRoundTrip. It is 0 when there was under one switch per
	// round trip: such a round trip is not made of switches (syscall and
	// goroutine modes), and the quotient would exceed the round trip itself.
	NsPerSwitch float64 `json:"ns_per_switch"`
	// Migrations is the sum of se.nr_migrations over the workload's
	// threads; nil (JSON null) when the kernel does not expose it.
	Migrations *uint64 `json:"migrations"`
}

// What SwitchesCounted says.
const (
	CountedWorkload = "workload threads"
	CountedProcess  = "every thread of the process"
)

// Switches is the kernel's count of both kinds.
func (s Summary) Switches() uint64 { return s.SwitchesVoluntary + s.SwitchesInvoluntary }

// stopGrace is how long Stop lets a side finish its round trip before it
// forces the issue (kills a stuck child).
const stopGrace = 100 * time.Millisecond

// Run is one running workload. Its methods are safe from any goroutine.
type Run struct {
	cfg   Config
	pairs []*pair
	// threads are the workload's OS threads, in this process or the child.
	threads []*thread
	// whole is set in goroutine mode: counters over the whole process.
	whole0 Counters
	// pinned is goroutine mode's whole-process pinning, undone by Stop.
	pinned *pinnedProcess

	start    time.Time
	endNanos atomic.Int64 // wall end, unix nanos, set when the last pair ended
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

	mu  sync.Mutex
	win [2]mark // progress marks, for the recent rate
}

type mark struct {
	t time.Time
	n uint64
}

// pair is one ping-pong pair.
type pair struct {
	// count is padded to its own cache line: the ping side bumps it every
	// round trip and pairs must not share a line.
	_     [64]byte
	count atomic.Uint64
	stop  atomic.Bool
	_     [64]byte
	quota uint64 // round trips for this pair; 0 = no limit
	impl  pairImpl
}

// pairImpl is a mode's two sides.
type pairImpl interface {
	// sides are the thread bodies run on locked OS threads; goroutine mode
	// returns none and runs in start.
	sides() []sideSpec
	// wake unblocks both sides after stop is set; called more than once.
	wake()
	// force unblocks a side that wake could not (a stuck child).
	force()
	// close releases fds after both sides returned.
	close()
}

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
}

// Start validates cfg and starts the workload in the background; it
// returns once every side is set up (threads named and pinned, the child
// process started), so an error there comes back from Start.
func Start(cfg Config) (*Run, error) {
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	if cfg.Pairs < 0 {
		return nil, fmt.Errorf("pairs must be at least 1, got %d", cfg.Pairs)
	}
	if cfg.Pairs == 0 {
		cfg.Pairs = 1
	}
	if cfg.Duration < 0 {
		return nil, fmt.Errorf("duration must not be negative, got %v", cfg.Duration)
	}
	if err := ValidateCPUs(cfg.CPUs); err != nil {
		return nil, err
	}
	cfg.CPUs = append([]int(nil), cfg.CPUs...)
	r := &Run{cfg: cfg, done: make(chan struct{})}
	for i := range cfg.Pairs {
		p := &pair{quota: share(cfg.RoundTrips, cfg.Pairs, i)}
		impl, err := newPairImpl(cfg, p)
		if err != nil {
			r.abort()
			return nil, err
		}
		p.impl = impl
		r.pairs = append(r.pairs, p)
	}

	gate := make(chan struct{})
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
		close(gate)
		r.wg.Wait()
		r.abort()
		return nil, errs[0]
	}
	if cfg.Mode == ModeGoroutine {
		if len(cfg.CPUs) > 0 {
			// Before the goroutines start, so that no thread the runtime
			// wakes for them runs elsewhere.
			pinned, err := pinProcess(cfg.CPUs)
			if err != nil {
				aborted.Store(true)
				close(gate)
				r.abort()
				return nil, fmt.Errorf("pinning the process to %s: %w", formatCPUs(cfg.CPUs), err)
			}
			r.pinned = pinned
		}
		r.whole0, _ = readProcessCounters(os.Getpid())
		for _, p := range r.pairs {
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				p.impl.(*goroutinePair).run(p, gate)
				r.markEnd()
			}()
		}
	}
	r.start = time.Now()
	r.win = [2]mark{{t: r.start}, {t: r.start}}
	close(gate)
	if cfg.Duration > 0 {
		r.timer = time.AfterFunc(cfg.Duration, r.halt)
	}
	go func() {
		r.wg.Wait()
		close(r.done)
	}()
	return r, nil
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

func newPairImpl(cfg Config, p *pair) (pairImpl, error) {
	switch cfg.Mode {
	case ModeGoroutine:
		return newGoroutinePair(p), nil
	case ModeFutex:
		return newFutexPair(cfg, p), nil
	case ModePipe:
		return newPipePair(cfg, p)
	case ModeProcess:
		return newProcessPair(cfg, p)
	case ModeSyscall:
		return newSyscallPair(cfg, p), nil
	}
	return nil, fmt.Errorf("unknown mode %q", cfg.Mode)
}

// runSide runs one side on its own OS thread. The goroutine never unlocks
// the thread, so when it returns the runtime destroys the thread instead
// of handing a pinned, renamed thread back to the pool.
func (r *Run) runSide(s sideSpec, t *thread, ready *sync.WaitGroup, gate <-chan struct{}, aborted *atomic.Bool) {
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

func (r *Run) runLocked(s sideSpec, t *thread, ready *sync.WaitGroup, gate <-chan struct{}, aborted *atomic.Bool) {
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
	<-gate
	if t.err != nil || aborted.Load() {
		return
	}
	s.body()
	r.markEnd()
	t.c1, t.err = readSelfCounters()
	if s.finish != nil {
		s.finish(t)
	}
}

func (r *Run) markEnd() {
	now := time.Now().UnixNano()
	for {
		old := r.endNanos.Load()
		if old >= now || r.endNanos.CompareAndSwap(old, now) {
			return
		}
	}
}

// halt asks every pair to stop and wakes their sides; it does not wait.
func (r *Run) halt() {
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

// abort releases what a failed Start set up.
func (r *Run) abort() {
	r.halt()
	for _, p := range r.pairs {
		p.impl.force()
	}
	r.closePairs()
}

func (r *Run) closePairs() {
	r.haltMu.Lock()
	defer r.haltMu.Unlock()
	r.closed = true
	for _, p := range r.pairs {
		p.impl.close()
	}
}

// Done is closed when the run ends: its duration or round trips reached,
// or after Stop.
func (r *Run) Done() <-chan struct{} { return r.done }

func (r *Run) total() uint64 {
	var n uint64
	for _, p := range r.pairs {
		n += p.count.Load()
	}
	return n
}

// Progress is the run's live state; cheap enough to call every frame.
func (r *Run) Progress() Progress {
	now := time.Now()
	n := r.total()
	if e := r.endNanos.Load(); e != 0 && r.finished() {
		now = time.Unix(0, e)
	}
	pr := Progress{Config: r.cfg, Elapsed: now.Sub(r.start), RoundTrips: n}
	pr.Config.CPUs = append([]int(nil), r.cfg.CPUs...)
	for _, t := range r.threads {
		if t.pid == os.Getpid() {
			pr.TIDs = append(pr.TIDs, t.tid)
		} else {
			pr.ChildPID = t.pid
		}
	}
	r.mu.Lock()
	if now.Sub(r.win[1].t) >= time.Second {
		r.win[0], r.win[1] = r.win[1], mark{t: now, n: n}
	}
	from := r.win[0]
	r.mu.Unlock()
	if n > from.n {
		pr.NsPerRoundTrip = float64(now.Sub(from.t).Nanoseconds()) * float64(r.cfg.Pairs) / float64(n-from.n)
	}
	return pr
}

func (r *Run) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Stop ends the run, waits for its threads and child, and returns the
// summary. It returns within about stopGrace even if a side is stuck, and
// every later call returns the same summary.
func (r *Run) Stop() Summary {
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
		r.closePairs()
		r.summary = r.summarize()
		r.pinned.restore()
	})
	return r.summary
}

func (r *Run) summarize() Summary {
	end := time.Unix(0, r.endNanos.Load())
	if r.endNanos.Load() == 0 {
		end = r.start
	}
	s := Summary{
		Mode:       r.cfg.Mode,
		CPUs:       append([]int{}, r.cfg.CPUs...),
		Pairs:      r.cfg.Pairs,
		DurationS:  end.Sub(r.start).Seconds(),
		RoundTrips: r.total(),
	}
	s.SwitchesCounted = CountedWorkload
	var d Counters
	d.HasMigrations = true
	if r.cfg.Mode == ModeGoroutine {
		s.SwitchesCounted = CountedProcess
		c1, err := readProcessCounters(os.Getpid())
		if err != nil {
			d.HasMigrations = false
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
	for _, t := range r.threads {
		if t.err != nil {
			d.HasMigrations = false
			continue
		}
		d = d.add(t.c1.sub(t.c0))
	}
	s.SwitchesVoluntary, s.SwitchesInvoluntary = d.Voluntary, d.Involuntary
	if d.HasMigrations {
		m := d.Migrations
		s.Migrations = &m
	}
	if s.RoundTrips > 0 {
		s.NsPerRoundTrip = end.Sub(r.start).Seconds() * 1e9 * float64(s.Pairs) / float64(s.RoundTrips)
		s.SwitchesPerRoundTrip = float64(s.Switches()) / float64(s.RoundTrips)
	}
	s.NsPerSwitch = NsPerSwitch(s.NsPerRoundTrip, s.SwitchesPerRoundTrip)
	return s
}

// readProcessCounters sums the counters over every thread of pid.
func readProcessCounters(pid int) (Counters, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Counters{}, err
	}
	sum := Counters{HasMigrations: true}
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

// NsPerSwitch is the cost per kernel-counted switch, or 0 where it does not
// apply: under one switch per round trip.
func NsPerSwitch(nsPerRoundTrip, switchesPerRoundTrip float64) float64 {
	if switchesPerRoundTrip < 1 || nsPerRoundTrip <= 0 {
		return 0
	}
	return nsPerRoundTrip / switchesPerRoundTrip
}

// SwitchesPerSecond is the kernel-counted switch rate over the run.
func (s Summary) SwitchesPerSecond() float64 {
	if s.DurationS <= 0 {
		return 0
	}
	return float64(s.Switches()) / s.DurationS
}
