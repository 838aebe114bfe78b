package tui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// without is s steps seconds on, over an interval of as long, with the
// threads of exited removed and listed as exited in that interval.
func without(s model.Snapshot, steps int, exited []model.ExitedTask) model.Snapshot {
	s.Time, s.Interval = s.Time.Add(time.Duration(steps)*time.Second), time.Duration(steps)*time.Second
	s.Threads = slices.DeleteFunc(slices.Clone(s.Threads), func(t model.ThreadRates) bool {
		return slices.ContainsFunc(exited, func(e model.ExitedTask) bool { return e.TID == t.TID })
	})
	s.Exited = exited
	return s
}

// The detail view stays on its thread when the thread exits, marks it
// exited and when, with rates 0, instead of keeping its last figures as
// live or moving to whichever row took its place in the table.
func TestDetailMarksItsThreadExited(t *testing.T) {
	base := tuitest.Snapshot()
	gone := []model.ExitedTask{{PID: 901, TID: 911}}
	later := without(base, 1, gone)
	later.Exited = nil // still gone; no news of it
	src := &fakeSource{snaps: []model.Snapshot{base, without(base, 1, gone), without(later, 1, nil), without(later, 2, nil)}}
	m := sampled(t, newRoot(t, src, 100, 40))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("enter"))
	if m.detail.TID() != 911 {
		t.Fatalf("Enter on pool-1-thread-1 shows thread %d", m.detail.TID())
	}
	m = sampled(t, m)
	got := ansi.Strip(m.Render())
	for _, want := range []string{"thread 911 pool-1-thread-1", "EXITED", "thread exited between 15:09:26.0 and 15:09:27.0 (0s ago)", "state exited", "voluntary/s            0"} {
		if !strings.Contains(got, want) {
			t.Errorf("after the thread exited, missing %q:\n%s", want, got)
		}
	}
	if m.detail.TID() != 911 {
		t.Errorf("the detail moved to thread %d when its thread exited", m.detail.TID())
	}
	m = sampled(t, m)
	m = sampled(t, m)
	got = ansi.Strip(m.Render())
	if !strings.Contains(got, "(2s ago)") || !strings.Contains(got, "EXITED") || m.detail.TID() != 911 {
		t.Errorf("two refreshes later, want thread 911 still marked, exited 2s ago:\n%s", got)
	}
	// Moving leaves it for a thread that lives.
	m, _ = step(t, m, press("down"))
	if got := ansi.Strip(m.Render()); m.detail.TID() == 911 || strings.Contains(got, "EXITED") {
		t.Errorf("↓ from the exited thread: thread %d\n%s", m.detail.TID(), got)
	}
}

// A process that exits whole is named, on the detail of any of its threads.
func TestDetailMarksItsProcessExited(t *testing.T) {
	base := tuitest.Snapshot()
	var gone []model.ExitedTask
	for _, th := range base.Threads {
		if th.PID == 901 {
			gone = append(gone, model.ExitedTask{PID: 901, TID: th.TID, Process: true})
		}
	}
	src := &fakeSource{snaps: []model.Snapshot{base, without(base, 2, gone)}}
	m := sampled(t, newRoot(t, src, 100, 40))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("enter"))
	m = sampled(t, m)
	got := ansi.Strip(m.Render())
	for _, want := range []string{"thread 912 pool-1-thread-2", "EXITED", "process 901 exited between 15:09:26 and 15:09:28", "state exited"} {
		if !strings.Contains(got, want) {
			t.Errorf("after its process exited, missing %q:\n%s", want, got)
		}
	}
}

// A thread that went with its process, whose main thread lingered as a
// zombie until its parent reaped it a refresh later, is its process's exit.
func TestDetailMarksProcessExitAfterItsZombie(t *testing.T) {
	base := tuitest.Snapshot()
	var first []model.ExitedTask
	for _, th := range base.Threads {
		if th.PID == 901 {
			first = append(first, model.ExitedTask{PID: 901, TID: th.TID})
		}
	}
	gone := without(base, 1, first)
	src := &fakeSource{snaps: []model.Snapshot{base, gone, without(gone, 1, []model.ExitedTask{{PID: 901, TID: 901, Process: true}})}}
	m := sampled(t, newRoot(t, src, 100, 40))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("enter"))
	m = sampled(t, m)
	if got := ansi.Strip(m.Render()); !strings.Contains(got, "thread exited between 15:09:26.0 and 15:09:27.0") {
		t.Errorf("its threads gone, the zombie main thread left:\n%s", got)
	}
	m = sampled(t, m)
	if got := ansi.Strip(m.Render()); !strings.Contains(got, "process 901 exited between 15:09:26.0 and 15:09:27.0 (1s ago)") {
		t.Errorf("the zombie reaped:\n%s", got)
	}
}
