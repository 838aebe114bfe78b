package bpfutil

import (
	"sync"
	"sync/atomic"
	"time"
)

// Tracer is what a collector switches on and off: a tracer's loaded
// programs and maps, which Close frees.
type Tracer interface{ Close() error }

// Hooks are what one tracer adds to the lifecycle every collector shares.
// Each runs with the lifecycle locked.
type Hooks[T Tracer] struct {
	// Open loads the programs and attaches those attached from the
	// start. Its error, one line wrapping the tracer's ErrUnavailable, is
	// why the collector is not running.
	Open func() (T, error)
	// Start runs when the collector is turned on with its tracer loaded
	// (opened now, or kept from before), to start the collector's own
	// state afresh; its error is kept as why not. nil for nothing.
	Start func(T) error
	// Sync runs at every Apply while the collector runs, for settings a
	// view changes while it is on. nil for none.
	Sync func(T) error
	// Stop runs when the collector is turned off or closed, before its
	// tracer is detached or freed. nil for nothing.
	Stop func()
	// Idle detaches the programs and empties the maps but keeps them
	// loaded for Keep after the collector is turned off: loading costs
	// the verifier's time, and a view closed and opened again within Keep
	// then only attaches. nil frees the tracer at once, as does an error.
	Idle func(T) error
	Keep time.Duration
}

// Lifecycle is a collector's switch between off and running, the same
// for every tracer. Want records, at once and without blocking, whether
// it should run (a view opened, a flag given); Apply, which can take a
// while, makes it so: a caller with an event loop calls Want there and
// Apply off it, and of several Applies in flight whichever runs last
// applies the latest Want. A failure to open is kept as the reason,
// reported by every read until the collector is turned off, and not tried
// again meanwhile: each try would pay the verifier to say the same.
//
// Its methods are safe from any goroutine. The collector keeps its own
// state under the same lock (Lock, Unlock), so a read sees the tracer and
// what was computed from it together.
type Lifecycle[T Tracer] struct {
	h    Hooks[T]
	want atomic.Bool
	mu   sync.Mutex
	// on is the last Want applied; loaded whether tr holds a tracer
	// (running, or kept loaded by Idle).
	on, loaded bool
	tr         T
	err        error
	// unload frees a tracer kept loaded once Keep has passed.
	unload *time.Timer
}

// NewLifecycle returns a lifecycle that is off.
func NewLifecycle[T Tracer](h Hooks[T]) *Lifecycle[T] { return &Lifecycle[T]{h: h} }

// Want records whether the collector should run; Apply makes it so.
func (l *Lifecycle[T]) Want(on bool) { l.want.Store(on) }

// SetEnabled is Want then Apply.
func (l *Lifecycle[T]) SetEnabled(on bool) {
	l.Want(on)
	l.Apply()
}

// Apply opens or reuses the tracer, or detaches it, as the last Want
// asked.
func (l *Lifecycle[T]) Apply() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if on := l.want.Load(); on != l.on {
		l.on = on
		if !on {
			l.idle()
			return
		}
		l.start()
	}
	if l.on && l.err == nil && l.h.Sync != nil {
		l.err = l.h.Sync(l.tr)
	}
}

func (l *Lifecycle[T]) start() {
	l.stopUnload()
	if !l.loaded {
		tr, err := l.h.Open()
		if err != nil {
			l.err = err
			return
		}
		l.tr, l.loaded = tr, true
	}
	if l.h.Start != nil {
		l.err = l.h.Start(l.tr)
	}
}

// idle turns the collector off: the tracer is kept loaded for Keep when
// the tracer can idle, else freed.
func (l *Lifecycle[T]) idle() {
	l.err = nil
	if l.h.Stop != nil {
		l.h.Stop()
	}
	if !l.loaded {
		return
	}
	if l.h.Idle == nil || l.h.Idle(l.tr) != nil {
		l.close()
		return
	}
	// The timer frees the tracer only if it is still the one set: a
	// later Apply that turned the collector on, or off again, replaced or
	// stopped it, and an expiry already waiting for the lock must not
	// free what that Apply keeps.
	var t *time.Timer
	t = time.AfterFunc(l.h.Keep, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.unload == t {
			l.close()
		}
	})
	l.unload = t
}

func (l *Lifecycle[T]) stopUnload() {
	if l.unload != nil {
		l.unload.Stop()
		l.unload = nil
	}
}

// close frees the tracer.
func (l *Lifecycle[T]) close() {
	l.stopUnload()
	if l.loaded {
		l.tr.Close()
		var zero T
		l.tr, l.loaded = zero, false
	}
	l.err = nil
}

// Close turns the collector off and frees the tracer for good.
func (l *Lifecycle[T]) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.want.Store(false)
	l.on = false
	if l.h.Stop != nil {
		l.h.Stop()
	}
	l.close()
}

// Err is why the collector is not running although turned on; nil when
// it runs or is off.
func (l *Lifecycle[T]) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Lock and Unlock guard the collector's own state with the lifecycle's.
func (l *Lifecycle[T]) Lock()   { l.mu.Lock() }
func (l *Lifecycle[T]) Unlock() { l.mu.Unlock() }

// Ready says, with l locked, whether the collector runs (ok) and so may
// read tr; if not, why is "" when it is off and the reason when it
// failed. tr is the tracer whenever one is loaded, running or not.
func (l *Lifecycle[T]) Ready() (tr T, ok bool, why string) {
	switch {
	case !l.on:
	case l.err != nil:
		why = l.err.Error()
	default:
		ok = l.loaded
	}
	return l.tr, ok, why
}

// Fail keeps err, with l locked, as why the running collector stopped
// working; reads report it until the collector is turned off.
func (l *Lifecycle[T]) Fail(err error) {
	if l.on && err != nil {
		l.err = err
	}
}
