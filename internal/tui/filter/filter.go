// Package filter is the typed filter shared by the thread table and the
// wake-up view: the keys that edit it and the prompt that shows it.
package filter

import (
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// Edit applies a key typed into the filter f: the new filter, and whether
// typing goes on (Enter keeps the filter and stops; Esc clears it and
// stops).
func Edit(f string, k tea.KeyPressMsg) (string, bool) {
	switch k.String() {
	case "esc":
		return "", false
	case "enter":
		return f, false
	case "backspace":
		if r := []rune(f); len(r) > 0 {
			f = string(r[:len(r)-1])
		}
		return f, true
	}
	return f + k.Text, true
}

// Prompt is the line that shows f while it is typed.
func Prompt(th theme.Theme, f string, width int) string {
	return textutil.Truncate(th.Key.Render("/")+f+"█"+th.Dim.Render("  Enter keep  Esc clear"), width)
}
