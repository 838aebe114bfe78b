package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// reporting is a played recording that writes reports, counting them.
type reporting struct {
	*played
	calls int
	err   error
}

func (r *reporting) Report() (string, error) {
	r.calls++
	return "storm-100001-100300.html (80 KB)", r.err
}

func TestReplayKeyRWritesTheReportAndSaysWhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"written", nil, "wrote storm-100001-100300.html (80 KB)"},
		{"refused", errors.New("permission denied"), "report: permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := replayRoot(t, 120, 24)
			rep := &reporting{played: m.replay.src.(*played), err: tc.err}
			m.replay.src = rep
			next, cmd := m.Update(press("R"))
			m = next.(Model)
			if cmd == nil {
				t.Fatal("R started nothing")
			}
			msg := runWithin(cmd, time.Second)
			next, _ = m.Update(msg)
			m = next.(Model)
			if rep.calls != 1 {
				t.Errorf("reports written = %d, want 1", rep.calls)
			}
			got := tuitest.Render(t, m.Render(), colorprofile.Ascii)
			if !strings.Contains(got, tc.want) {
				t.Errorf("screen lacks %q:\n%s", tc.want, got)
			}
		})
	}
}
