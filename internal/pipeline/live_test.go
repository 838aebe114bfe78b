package pipeline

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// A Next asked for right after the last one (the TUI's pause toggled twice)
// waits until half an interval has passed, rather than report over a few
// milliseconds; SetInterval moves that bound.
func TestLiveNeverReportsOverATinyInterval(t *testing.T) {
	l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{os.Getpid()}}, Interval: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 2 {
		s, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		if s.Interval < 200*time.Millisecond {
			t.Errorf("report %d is over %v, less than half the 400ms interval", i, s.Interval)
		}
	}
	l.SetInterval(100 * time.Millisecond)
	s, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	if s.Interval < 50*time.Millisecond {
		t.Errorf("after SetInterval(100ms) the report is over %v, less than 50ms", s.Interval)
	}
}

// The first interval's hot blocking threads get looks spread over it, as
// every later interval's do: looked at only at the refresh, a few looks
// microseconds apart saw one moment of the scheduler, and the first report
// often named no wait for one side of a busy ping-pong.
func TestFirstIntervalSpreadsItsLooks(t *testing.T) {
	pid, tids := testutil.StartPingPong(t)
	var recorded []model.Sample
	l, err := NewLive(LiveConfig{
		Sampler:  sampler.Config{Root: "/proc", PIDs: []int{pid}},
		Interval: time.Second,
		Record: func(s *model.Sample) error {
			recorded = append(recorded, model.Sample{Waits: slices.Clone(s.Waits)})
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	time.Sleep(time.Second)
	snap, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 2 {
		t.Fatalf("%d samples recorded, want the baseline and the first", len(recorded))
	}
	for _, tid := range tids {
		i := slices.IndexFunc(snap.Threads, func(r model.ThreadRates) bool { return r.TID == tid })
		if i < 0 || !snap.Threads[i].HotBlocking() {
			t.Fatalf("ping-pong thread %d is not hot and blocking in the first report", tid)
		}
		looks := 0
		for _, w := range recorded[1].Waits {
			if w.TID == tid {
				looks = w.Looks
			}
		}
		// The refresh alone takes at most 3 (firstLooks); a busy host may
		// delay some of the spread ones past the end of the interval.
		if looks <= 3 {
			t.Errorf("thread %d: %d looks in the first interval, want more than the refresh's 3 (up to %d)", tid, looks, sampler.WaitLooks)
		}
	}
}

// Closing a live source before, during or after the first interval's peek
// neither hangs nor lets the peek read through closed files; a second
// Close returns too.
func TestCloseAroundTheFirstPeek(t *testing.T) {
	for _, after := range []time.Duration{0, 20 * time.Millisecond, 25 * time.Millisecond, 60 * time.Millisecond} {
		l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{os.Getpid()}}, Interval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(after)
		done := make(chan struct{})
		go func() {
			l.Close()
			l.Close()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Close %v after NewLive did not return", after)
		}
	}
}

// The pass after the baseline (the first interval's peek, or the first
// Next) writes every thread into the second of Live's two samples, which
// had never held them: growing it then, and the kernel faulting its pages
// in, made that pass two to five times a steady one (4.7 MB allocated and
// 2,400 page faults at 20,000 threads). NewLive readies it in the start,
// so that pass allocates next to nothing, as every later one does.
func TestSecondPassAllocatesNoTaskList(t *testing.T) {
	const threads = 4000
	pid := testutil.StartCThreads(t, threads, false)
	l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{pid}}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := l.s.Sample(l.cur); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	// A task list is threads × ~160 bytes, some 640 KB; the bound is a
	// tenth of it.
	const limit = threads * 16
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Errorf("the pass after the baseline allocated %d bytes (%d threads), want at most %d", got, len(l.cur.Tasks), limit)
	}
}

// TestHostGrowthReallocatesNoTaskList: when the threads watched grow by a
// few dozen after the start, the passes that follow write them into the
// task lists they have: neither sample's list is reallocated. Grown to fit
// exactly (the baseline's) or copied exactly (the second sample's), each
// was reallocated in its next pass, some 650 KB here and 4 MB at 20,000
// threads, whose pages the kernel faulted in: a pass of 800-1,400 faults
// at 2-5 times a steady one, once in a minute on a host whose threads
// came and went.
func TestHostGrowthReallocatesNoTaskList(t *testing.T) {
	const threads, more = 4000, 64
	pid, grow := testutil.StartGrowingCThreads(t, threads)
	l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{pid}}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range more {
		grow()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, smp := range []*model.Sample{l.cur, l.prev} {
		if err := l.s.Sample(smp); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if n := len(l.prev.Tasks); n < threads+more {
		t.Fatalf("the pass found %d threads, want %d or more", n, threads+more)
	}
	// A task list is threads × ~160 bytes, some 640 KB; the bound is a
	// tenth of it for the two passes.
	const limit = threads * 16
	if got := after.TotalAlloc - before.TotalAlloc; got > limit {
		t.Errorf("the two passes after %d more threads allocated %d bytes, want at most %d", more, got, limit)
	}
}
