package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// Under hidepid the header says other users' processes are hidden, and
// the remainder row says its switches are theirs, not born or exited
// threads'.
func TestHidepidSaidInHeaderAndRemainderRow(t *testing.T) {
	for _, c := range []struct {
		hidepid     string
		want, never []string
	}{
		{"invisible", []string{"others hidden (hidepid)", "hidden tasks (hidepid)"}, []string{"new/exited tasks, idle"}},
		{"", []string{"new/exited tasks, idle"}, []string{"hidepid"}},
	} {
		m := New(Options{Source: &fakeSource{}, Interval: time.Second, HotThreshold: 1000, NoColor: true, Version: "test",
			FixedBackground: true, HidePID: c.hidepid}, "db-7", "6.18.0")
		m = sampled(t, m.handleResize(160, 40))
		got := tuitest.Render(t, m.Render(), colorprofile.Ascii)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("hidepid %q: screen lacks %q:\n%s", c.hidepid, w, got)
			}
		}
		for _, n := range c.never {
			if strings.Contains(got, n) {
				t.Errorf("hidepid %q: screen says %q:\n%s", c.hidepid, n, got)
			}
		}
	}
}
