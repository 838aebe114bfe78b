package filter

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestEdit(t *testing.T) {
	text := func(s string) tea.KeyPressMsg { return tea.KeyPressMsg{Code: []rune(s)[0], Text: s} }
	for _, tc := range []struct {
		f      string
		k      tea.KeyPressMsg
		want   string
		typing bool
	}{
		{"po", text("o"), "poo", true},
		{"数据", tea.KeyPressMsg{Code: tea.KeyBackspace}, "数", true},
		{"", tea.KeyPressMsg{Code: tea.KeyBackspace}, "", true},
		{"pool", tea.KeyPressMsg{Code: tea.KeyEnter}, "pool", false},
		{"pool", tea.KeyPressMsg{Code: tea.KeyEscape}, "", false},
	} {
		got, typing := Edit(tc.f, tc.k)
		if got != tc.want || typing != tc.typing {
			t.Errorf("Edit(%q, %q) = %q, %v; want %q, %v", tc.f, tc.k.String(), got, typing, tc.want, tc.typing)
		}
	}
}
