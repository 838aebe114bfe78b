package load

import "sync/atomic"

// ModeFutex: two OS threads waking each other with FUTEX_WAIT and
// FUTEX_WAKE on a shared word, as Java's LockSupport.park/unpark does.
const ModeFutex Mode = "futex"

func futexInfo() Info {
	return Info{
		Mode:    ModeFutex,
		Title:   "two threads waking each other with a futex",
		Help:    "two OS threads, FUTEX_WAIT/FUTEX_WAKE on a shared word (Java's park/unpark)",
		MaxCPUs: 2, Walks: true, Bench: true,
		Unit: roundTrip(), count: roundTrips, threadsPerUnit: 2,
		prepare: func(cfg Config) unitMaker {
			return func(p *pair) (pairImpl, error) { return newFutexPair(cfg, p), nil }
		},
	}
}

// The futex word: whose turn it is, or that the pair is over.
const (
	turnPing = 0
	turnPong = 1
	over     = 2
)

// futexPair is the park/unpark experiment: each side hands the turn over
// on a shared word, wakes the other, and sleeps in FUTEX_WAIT until the
// turn comes back.
type futexPair struct {
	p    *pair
	cpus []int
	sideSets
	word atomic.Uint32
}

func newFutexPair(cfg Config, p *pair) *futexPair {
	return &futexPair{p: p, cpus: cfg.CPUs, sideSets: sideSets{size: cfg.WorkingSet}}
}

func (f *futexPair) sides() []sideSpec {
	return []sideSpec{
		{name: threadName("ping", ModeFutex), cpu: sideCPU(f.cpus, 0), setup: f.setupSide(0), body: f.ping},
		{name: threadName("pong", ModeFutex), cpu: sideCPU(f.cpus, 1), setup: f.setupSide(1), body: f.pong},
	}
}

func (f *futexPair) ping() {
	defer f.wake()
	for !f.p.stop.Load() {
		f.ws[0].walk()
		// A CAS rather than a store, so that a concurrent "over" is never
		// overwritten.
		if !f.word.CompareAndSwap(turnPing, turnPong) {
			return
		}
		futexWake(&f.word, 1)
		v := f.word.Load()
		for v == turnPong {
			futexWait(&f.word, turnPong)
			v = f.word.Load()
		}
		if v == over {
			return
		}
		if n := f.p.count.Add(1); n == f.p.quota {
			return
		}
	}
}

func (f *futexPair) pong() {
	for {
		v := f.word.Load()
		for v == turnPing {
			futexWait(&f.word, turnPing)
			v = f.word.Load()
		}
		if v == over {
			return
		}
		f.ws[1].walk()
		if !f.word.CompareAndSwap(turnPong, turnPing) {
			return
		}
		futexWake(&f.word, 1)
	}
}

func (f *futexPair) wake() {
	f.word.Store(over)
	futexWake(&f.word, wakeAll)
}

func (f *futexPair) force() { f.wake() }
func (f *futexPair) close() {}
