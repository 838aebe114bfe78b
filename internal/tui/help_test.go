package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// At 40x10 the help does not fit: ↓ pages it instead of leaving, any other
// key still leaves, and it opens at its top again.
func TestHelpPagesOnASmallScreen(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{}, 40, 10))
	m, _ = step(t, m, press("?"))
	top := ansi.Strip(m.Render())
	if !strings.Contains(top, "more lines") {
		t.Fatalf("help at 40x10 does not say there is more:\n%s", top)
	}
	m, _ = step(t, m, press("down"))
	if m.view != viewHelp {
		t.Fatalf("↓ left the help")
	}
	if got := ansi.Strip(m.Render()); got == top {
		t.Errorf("↓ did not move the help:\n%s", got)
	}
	tuitest.CheckFits(t, m.Render(), 40, 10)
	m, _ = step(t, m, press("x"))
	if m.view != viewTable {
		t.Fatalf("x should leave the help, view %v", m.view)
	}
	m, _ = step(t, m, press("?"))
	if got := ansi.Strip(m.Render()); got != top {
		t.Errorf("help reopened elsewhere than its top:\n%s", got)
	}
}
