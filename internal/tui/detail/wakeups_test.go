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
