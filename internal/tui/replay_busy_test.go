package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// TestNextSpikeOnABusyHostFindsTheBurst: on a host at 60,000 switches a
// second per CPU, ] from the start lands on the one burst (samples 40 to
// 44, positions 39 to 43), whose header names the baseline, and there is
// no spike before or after it.
func TestNextSpikeOnABusyHostFindsTheBurst(t *testing.T) {
	path := filepath.Join(t.TempDir(), "busy.ctxrec")
	if err := tuitest.BusyReplayFile(path, 90, 40, 45); err != nil {
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
	m := New(Options{Replay: playAll(t, p, hostinfo.Facts{Hostname: "busy-host"}, ""), Interval: time.Second, HotThreshold: 1000, NoColor: true, FixedBackground: true}, "this-host", "")
	m = m.handleResize(100, 24)
	m.replay.ctl.SetPlaying(false)
	m = replayStep(t, m, m.seek(m.replay.ctl.Pos())())
	if m.snap.Spike.Active {
		t.Errorf("the busy host's first sample is a spike: %+v", m.snap.Spike)
	}

	m = replayStep(t, m, press("]"))
	if got := m.replay.ctl.Pos(); got != 39 {
		t.Errorf("] from the start went to %d, want the burst at 39", got)
	}
	got := tuitest.Render(t, m.Render(), colorprofile.Ascii)
	for _, want := range []string{"10:00:40", "SPIKE", "the 5-min baseline 1", "40/90"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen at the burst lacks %q:\n%s", want, got)
		}
	}
	m = replayStep(t, m, press("]"))
	if got := tuitest.Render(t, m.Render(), colorprofile.Ascii); m.replay.ctl.Pos() != 39 || !strings.Contains(got, "no later spike") {
		t.Errorf("] past the burst: at %d, want 39 and \"no later spike\":\n%s", m.replay.ctl.Pos(), got)
	}
	m = replayStep(t, m, press("["))
	if got := tuitest.Render(t, m.Render(), colorprofile.Ascii); m.replay.ctl.Pos() != 39 || !strings.Contains(got, "no earlier spike") {
		t.Errorf("[ before the burst: at %d, want 39 and \"no earlier spike\":\n%s", m.replay.ctl.Pos(), got)
	}
}
