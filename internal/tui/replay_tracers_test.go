package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// tracedRoot replays a recording of 20 samples, with the tracers' reads
// as asked, in a root model of 100x40 that also has a loader, paused on
// its first sample.
func tracedRoot(t *testing.T, wakeups, stacks bool, ld Loader) Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "traced.ctxrec")
	if err := tuitest.TracedReplayFile(path, 20, wakeups, stacks); err != nil {
		t.Fatal(err)
	}
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Replay: playAll(t, p, hostinfo.Facts{Hostname: "replay-host"}, ""), Load: ld, Interval: time.Second,
		HotThreshold: 1000, NoColor: true, FixedBackground: true}, "this-host", "")
	m = m.handleResize(100, 40)
	m.replay.ctl.SetPlaying(false)
	m = replayStep(t, m, m.seek(m.replay.ctl.Pos())())
	for range 4 {
		m = replayStep(t, m, press("right"))
	}
	return m
}

// A recording made without --wakeups or --stacks says so in the views that
// would show them, rather than wait for a tracer a replay never attaches.
func TestReplayWithoutTracersSaysSo(t *testing.T) {
	m := tracedRoot(t, false, false, nil)
	m = replayStep(t, m, press("W"))
	got := ansi.Strip(m.Render())
	if !strings.Contains(got, "this recording has no wake-ups (record with --wakeups)") || strings.Contains(got, "attaching") {
		t.Errorf("W on a recording without wake-ups:\n%s", got)
	}
	m = replayStep(t, m, press("W"))
	m = replayStep(t, m, press("enter"))
	got = ansi.Strip(m.Render())
	for _, want := range []string{"stacks: none in this recording (record with --stacks)", "this recording has no wake-ups (record with --wakeups)"} {
		if m.view != viewDetail || !strings.Contains(got, want) {
			t.Errorf("the detail of a recording without stacks or wake-ups lacks %q:\n%s", want, got)
		}
	}
}

// A recording made with them shows them, in the wake-up view and the
// detail, though no tracer runs.
func TestReplayShowsRecordedTracers(t *testing.T) {
	m := tracedRoot(t, true, true, nil)
	m = replayStep(t, m, press("W"))
	got := ansi.Strip(m.Render())
	if !strings.Contains(got, "wake-ups ") || strings.Contains(got, "wake-ups 0 pairs") || strings.Contains(got, "attaching") ||
		strings.Contains(got, "no wake-ups") {
		t.Errorf("W on a recording with wake-ups:\n%s", got)
	}
	m = replayStep(t, m, press("W"))
	m = replayStep(t, m, press("enter"))
	got = ansi.Strip(m.Render())
	if strings.Contains(got, "none in this recording") || strings.Contains(got, "no wake-ups") {
		t.Errorf("the detail of a recording with stacks and wake-ups:\n%s", got)
	}
}

// L in a replay starts nothing on this host: it says why, and the help
// marks it live only and leaves out the load panel's keys.
func TestReplayHasNoLoad(t *testing.T) {
	ld := &fakeLoader{}
	m := tracedRoot(t, false, false, ld)
	m = replayStep(t, m, press("L"))
	m = replayStep(t, m, press("s"))
	if len(ld.runs) != 0 {
		t.Errorf("L then s in a replay started %d loads", len(ld.runs))
	}
	got := ansi.Strip(m.Render())
	if !strings.Contains(got, "L: no live load in a replay") || strings.Contains(got, "LOAD") {
		t.Errorf("L in a replay:\n%s", got)
	}
	m = replayStep(t, m, press("?"))
	got = ansi.Strip(m.Render())
	if !strings.Contains(got, "load: live only") || strings.Contains(got, "load: start/stop") || strings.Contains(got, "load: pinning") {
		t.Errorf("a replay's help:\n%s", got)
	}
}
