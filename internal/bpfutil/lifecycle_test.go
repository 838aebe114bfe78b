package bpfutil

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeTracer stands for a tracer: the lifecycle only opens, idles and
// closes it, which is what these tests count.
type fakeTracer struct{ closed, idled int }

func (f *fakeTracer) Close() error { f.closed++; return nil }

// counts is what a lifecycle did to its tracers.
type counts struct{ Opens, Starts, Syncs, Stops, Idles, Closes int }

func newCounted(openErr error, keep time.Duration, idle bool) (*Lifecycle[*fakeTracer], *counts, *[]*fakeTracer) {
	var n counts
	var made []*fakeTracer
	h := Hooks[*fakeTracer]{
		Open: func() (*fakeTracer, error) {
			n.Opens++
			if openErr != nil {
				return nil, openErr
			}
			f := &fakeTracer{}
			made = append(made, f)
			return f, nil
		},
		Start: func(*fakeTracer) error { n.Starts++; return nil },
		Sync:  func(*fakeTracer) error { n.Syncs++; return nil },
		Stop:  func() { n.Stops++ },
		Keep:  keep,
	}
	if idle {
		h.Idle = func(f *fakeTracer) error { f.idled++; n.Idles++; return nil }
	}
	return NewLifecycle(h), &n, &made
}

// closes counts the closes of made, under l's lock, which the unload
// timer takes to close.
func closes(l *Lifecycle[*fakeTracer], made []*fakeTracer) int {
	l.Lock()
	defer l.Unlock()
	n := 0
	for _, f := range made {
		n += f.closed
	}
	return n
}

func TestLifecycleOnOff(t *testing.T) {
	l, n, made := newCounted(nil, 0, false)
	l.Apply() // off and wanted off: nothing
	l.SetEnabled(true)
	l.Lock()
	tr, ok, why := l.Ready()
	l.Unlock()
	if !ok || why != "" || tr == nil {
		t.Errorf("on: Ready = %v, %v, %q; want the tracer", tr, ok, why)
	}
	l.Apply() // on and wanted on: only Sync again
	l.SetEnabled(false)
	l.Lock()
	_, ok, why = l.Ready()
	l.Unlock()
	if ok || why != "" {
		t.Errorf("off: Ready = %v, %q; want not ok and no reason", ok, why)
	}
	want := counts{Opens: 1, Starts: 1, Syncs: 2, Stops: 1}
	if diff := cmp.Diff(want, *n); diff != "" {
		t.Errorf("hooks run (-want +got):\n%s", diff)
	}
	if c := closes(l, *made); c != 1 {
		t.Errorf("tracer closed %d times, want 1 (no Idle: freed at once)", c)
	}
}

func TestLifecycleKeepsWhyNotUntilOff(t *testing.T) {
	fail := errors.New("things unavailable: needs root")
	l, n, _ := newCounted(fail, 0, false)
	l.SetEnabled(true)
	l.SetEnabled(true) // not opened again: it would say the same
	l.Lock()
	_, ok, why := l.Ready()
	l.Unlock()
	if ok || why != fail.Error() {
		t.Errorf("Ready = %v, %q; want the reason %q", ok, why, fail)
	}
	if !errors.Is(l.Err(), fail) {
		t.Errorf("Err = %v, want %v", l.Err(), fail)
	}
	if n.Opens != 1 || n.Starts != 0 || n.Syncs != 0 {
		t.Errorf("after a failed open: %+v, want one open and no start or sync", *n)
	}
	l.SetEnabled(false)
	if l.Err() != nil {
		t.Errorf("off: Err = %v, want nil", l.Err())
	}
	l.SetEnabled(true)
	if n.Opens != 2 {
		t.Errorf("turned on again: %d opens, want 2", n.Opens)
	}
}

func TestLifecycleFailKeepsTheReason(t *testing.T) {
	l, _, _ := newCounted(nil, 0, false)
	l.Lock()
	l.Fail(errors.New("ignored while off"))
	l.Unlock()
	if l.Err() != nil {
		t.Fatalf("Fail while off kept %v", l.Err())
	}
	l.SetEnabled(true)
	l.Lock()
	l.Fail(errors.New("reading the maps: EIO"))
	tr, ok, why := l.Ready()
	l.Unlock()
	if ok || why != "reading the maps: EIO" || tr == nil {
		t.Errorf("after Fail: Ready = %v, %v, %q; want the loaded tracer, not ok, the reason", tr, ok, why)
	}
}

// TestLifecycleIdleKeepsLoaded: turned off, a tracer that can idle stays
// loaded for Keep, and turning on within it reuses it; past Keep it is
// freed.
func TestLifecycleIdleKeepsLoaded(t *testing.T) {
	// Long enough that the checks right after turning off run within it
	// on a loaded host.
	const keep = time.Second
	l, n, made := newCounted(nil, keep, true)
	l.SetEnabled(true)
	l.SetEnabled(false)
	l.SetEnabled(true)
	if n.Opens != 1 || n.Starts != 2 || n.Idles != 1 {
		t.Errorf("on, off, on within Keep: %+v, want one open, two starts, one idle", *n)
	}
	l.SetEnabled(false)
	if c := closes(l, *made); c != 0 {
		t.Errorf("within Keep: closed %d times, want kept", c)
	}
	deadline := time.Now().Add(10 * time.Second) // a loaded host delays the timer
	for closes(l, *made) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	l.Lock()
	loaded := l.loaded
	l.Unlock()
	if c := closes(l, *made); c != 1 || loaded {
		t.Errorf("past Keep: closed %d times, loaded %v; want freed once", c, loaded)
	}
}

// TestLifecycleStaleUnloadKeepsTheTracer: an unload timer that fired while
// the lock was held by an Apply that turned the collector on and off
// again must not free the tracer that Apply kept for a new Keep.
func TestLifecycleStaleUnloadKeepsTheTracer(t *testing.T) {
	const keep = 50 * time.Millisecond
	l, _, made := newCounted(nil, keep, true)
	l.SetEnabled(true)
	l.SetEnabled(false)
	// Hold the lock across the first timer's expiry, then turn on and
	// off again under it, as two Applies racing the timer would. The
	// second keep is long, so that only the first expiry can free it.
	l.Lock()
	time.Sleep(2 * keep)
	l.on = true
	l.start()
	l.on = false
	l.h.Keep = time.Hour
	l.idle()
	l.Unlock()
	time.Sleep(200 * time.Millisecond) // the first expiry now takes the lock
	l.Lock()
	loaded := l.loaded
	l.Unlock()
	if c := closes(l, *made); c != 0 || !loaded {
		t.Errorf("a stale expiry freed the tracer kept anew (closed %d times, loaded %v)", c, loaded)
	}
	l.Close()
	if c := closes(l, *made); c != 1 {
		t.Errorf("Close: closed %d times, want 1", c)
	}
}

func TestLifecycleCloseFreesAndStops(t *testing.T) {
	l, n, made := newCounted(nil, time.Hour, true)
	l.SetEnabled(true)
	l.SetEnabled(false) // kept loaded for an hour
	l.Close()
	if c := closes(l, *made); c != 1 {
		t.Errorf("Close of a kept tracer: closed %d times, want 1", c)
	}
	if n.Stops != 2 {
		t.Errorf("Stop ran %d times, want 2 (off, Close)", n.Stops)
	}
	l.Apply()
	if n.Opens != 1 {
		t.Errorf("Apply after Close opened again (%d opens): Close must unset Want", n.Opens)
	}
}
