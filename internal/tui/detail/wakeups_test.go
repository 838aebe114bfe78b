package detail

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestViewWakeups(t *testing.T) {
	s := tuitest.Snapshot()
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true))
			m.SetSize(sz.Width, sz.Height-3)
			// pool-1-thread-2: woken by thread-1 and by interrupts, wakes thread-1.
			m.SetThread(s.Threads[3], true, nil, nil, s.Threads)
			m.SetWakeups(tuitest.Wakeups())
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-3)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestWakeupListsAreTopFive(t *testing.T) {
	s := tuitest.Snapshot()
	w := &model.Wakeups{}
	for i := range 8 {
		w.Pairs = append(w.Pairs, model.WakeupPair{WakerTID: 100 + i, WakerComm: "waker", WakeeTID: 912, WakeeComm: "pool-1-thread-2", PerSec: float64(1000 - i)})
	}
	m := New(theme.New(true, true))
	m.SetSize(100, 40)
	m.SetThread(s.Threads[3], true, nil, nil, nil)
	m.SetWakeups(w)
	got := ansi.Strip(m.View())
	if n := strings.Count(got, " waker "); n != 5 {
		t.Errorf("%d wakers listed, want the top 5:\n%s", n, got)
	}
	if strings.Count(got, "nobody in the last interval") != 1 || !strings.Contains(got, "wakes") {
		t.Errorf("want an empty wakes list said so:\n%s", got)
	}
	m.SetWakeups(nil)
	if got := m.View(); strings.Contains(got, "woken by") {
		t.Errorf("tracer off, yet a woken-by list:\n%s", got)
	}
}

// A figure the tracer could not measure reads as a word, not "-% cross-CPU"
// or "p50 - µs": interrupt wake-ups have no waker CPU, and a wake-up whose
// wakee never ran within the interval has no latency.
func TestViewWakeupsUnknownFigures(t *testing.T) {
	s := tuitest.Snapshot()
	w := tuitest.Wakeups()
	for i := range w.Pairs {
		p := &w.Pairs[i]
		switch {
		case p.WakerComm == "timer":
			p.Resolved, p.Timed = 0, 0
		case p.WakerTID == 912 && p.WakeeTID == 911:
			p.Timed = 0
		}
	}
	m := New(theme.New(false, true))
	m.SetSize(80, 21)
	m.SetThread(s.Threads[3], true, nil, nil, s.Threads)
	m.SetWakeups(w)
	got := tuitest.Render(t, m.View(), colorprofile.Ascii)
	tuitest.CheckFits(t, got, 80, 21)
	plain := ansi.Strip(got)
	for _, bad := range []string{"-%", "p50 - ", "- µs"} {
		if strings.Contains(plain, bad) {
			t.Errorf("an unknown figure shows as %q:\n%s", bad, plain)
		}
	}
	for _, want := range []string{"cross-CPU n/a", "p50 n/a"} {
		if !strings.Contains(strings.Join(strings.Fields(plain), " "), want) {
			t.Errorf("no %q for an unknown figure:\n%s", want, plain)
		}
	}
	tuitest.Golden(t, "80x24", got)
}

// TestShortViewKeepsTheStacks: at 80x24 (the view gets 21 rows) the
// wakers' and wakees' lists give up rows before "blocked at" and "woken
// from" do, and a tall view keeps five of each.
func TestShortViewKeepsTheStacks(t *testing.T) {
	s := tuitest.Snapshot()
	w := &model.Wakeups{}
	for i := range 8 {
		w.Pairs = append(w.Pairs, model.WakeupPair{WakerTID: 100 + i, WakerComm: "waker", WakeeTID: 912, WakeeComm: "pool-1-thread-2", PerSec: float64(1000 - i)})
		w.Pairs = append(w.Pairs, model.WakeupPair{WakerTID: 912, WakerComm: "pool-1-thread-2", WakeeTID: 200 + i, WakeeComm: "wakee", PerSec: float64(900 - i)})
	}
	th := s.Threads[3]
	share := func(own string, p float64) model.StackShare {
		return model.StackShare{Frames: []string{"futex_wait", "pthread_cond_wait", own, "start_thread"}, KernelFrames: 1, Own: own, Share: p, Count: 10}
	}
	th.BlockedAt = []model.StackShare{share("WorkQueue::take", 0.6), share("Pool::idle", 0.3), share("Log::flush", 0.1)}
	th.WokenFrom = []model.StackShare{share("WorkQueue::put", 0.7), share("Acceptor::loop", 0.3)}
	for _, c := range []struct {
		w, h int
		tall bool
	}{{80, 21, false}, {100, 60, true}} {
		m := New(theme.New(true, true))
		m.SetSize(c.w, c.h)
		m.SetThread(th, true, nil, nil, nil)
		m.SetWakeups(w)
		m.SetStacks(&model.Stacks{})
		got := ansi.Strip(m.View())
		tuitest.CheckFits(t, got, c.w, c.h)
		for _, want := range []string{"blocked at", "WorkQueue::take", "Log::flush", "woken from", "Acceptor::loop"} {
			if !strings.Contains(got, want) {
				t.Errorf("%dx%d: no %q:\n%s", c.w, c.h, want, got)
			}
		}
		if n := strings.Count(got, " waker "); (c.tall && n != 5) || (!c.tall && (n < 1 || n >= 5)) {
			t.Errorf("%dx%d: %d wakers listed:\n%s", c.w, c.h, n, got)
		}
	}
}

// TestWakeRowsCountsWakeLines: the count the view fits by is the lines it
// makes, for every limit, with lists longer and shorter than it, empty,
// and with the tracer unavailable or off.
func TestWakeRowsCountsWakeLines(t *testing.T) {
	s := tuitest.Snapshot()
	many := &model.Wakeups{}
	for i := range 8 {
		many.Pairs = append(many.Pairs, model.WakeupPair{WakerTID: 100 + i, WakerComm: "waker", WakeeTID: 912, WakeeComm: "pool-1-thread-2", PerSec: 10})
	}
	many.Pairs = append(many.Pairs, model.WakeupPair{WakerTID: 912, WakerComm: "pool-1-thread-2", WakeeTID: 300, WakeeComm: "wakee", PerSec: 5})
	for _, w := range []*model.Wakeups{nil, {}, {Unavailable: "needs root"}, tuitest.Wakeups(), many} {
		m := New(theme.New(true, true))
		m.SetSize(100, 40)
		m.SetThread(s.Threads[3], true, nil, nil, nil)
		m.SetWakeups(w)
		for limit := 1; limit <= topWakers; limit++ {
			if got, want := m.wakeRows(limit), len(m.wakeLines(limit)); got != want {
				t.Errorf("%+v, limit %d: wakeRows %d, wakeLines makes %d", w, limit, got, want)
			}
		}
	}
}

// The stack lists say how many samples their shares are of: a share's
// count over its share, the thread's samples in the window.
func TestStackListsSayTheirSamples(t *testing.T) {
	s := tuitest.Snapshot()
	th := s.Threads[3]
	share := func(own string, count uint64, p float64) model.StackShare {
		return model.StackShare{Frames: []string{"futex_wait", own}, KernelFrames: 1, Own: own, Share: p, Count: count}
	}
	th.BlockedAt = []model.StackShare{share("WorkQueue::take", 1230, 0.6), share("Log::flush", 205, 0.1)}
	th.WokenFrom = []model.StackShare{share("WorkQueue::put", 1, 1)}
	m := New(theme.New(true, true))
	m.SetSize(100, 40)
	m.SetThread(th, true, nil, nil, nil)
	m.SetStacks(&model.Stacks{})
	got := ansi.Strip(m.View())
	for _, want := range []string{"blocked at  2,050 samples", "woken from  1 sample\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q:\n%s", want, got)
		}
	}
}

// A stack that ends before its outermost frame says why, under the lists.
func TestStackCutShortSaysWhy(t *testing.T) {
	s := tuitest.Snapshot()
	th := s.Threads[3]
	th.BlockedAt = []model.StackShare{{Frames: []string{"futex_wait", "pthread_cond_wait", "WorkQueue::take"}, KernelFrames: 1,
		Own: "WorkQueue::take", Share: 1, Count: 40, Truncated: "stack copy too short"}}
	m := New(theme.New(true, true))
	m.SetSize(100, 40)
	m.SetThread(th, true, nil, nil, nil)
	m.SetStacks(&model.Stacks{})
	if got, want := ansi.Strip(m.View()), "stacks cut short: stack copy too short"; !strings.Contains(got, want) {
		t.Errorf("no %q:\n%s", want, got)
	}
}

// Stacks traced for a window of the refresh (a busy host) say so; traced
// throughout, or unknown (an older recording), they say nothing of it.
func TestStacksFromAWindowSaySo(t *testing.T) {
	s := tuitest.Snapshot()
	th := s.Threads[3]
	th.BlockedAt = []model.StackShare{{Frames: []string{"futex_wait", "WorkQueue::take"}, KernelFrames: 1, Own: "WorkQueue::take", Share: 1, Count: 40}}
	const want = "stacks from a window of 25% of the refresh"
	for _, c := range []struct {
		attached float64
		says     bool
	}{{0.25, true}, {1, false}, {0, false}} {
		m := New(theme.New(true, true))
		m.SetSize(100, 40)
		m.SetThread(th, true, nil, nil, nil)
		m.SetStacks(&model.Stacks{Attached: c.attached})
		got := ansi.Strip(m.View())
		if strings.Contains(got, "stacks from a window") != c.says || (c.says && !strings.Contains(got, want)) {
			t.Errorf("attached %v: want the window said %v (%q):\n%s", c.attached, c.says, want, got)
		}
	}
}
