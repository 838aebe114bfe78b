// Package keys is the TUI's key map, with the habits of top and htop.
package keys

import "charm.land/bubbles/v2/key"

// Map holds every binding; the help screen and footer are drawn from it.
type Map struct {
	Quit, Help                     key.Binding
	Up, Down, PageUp, PageDown     key.Binding
	Home, End                      key.Binding
	Filter, Pause, ToggleProcesses key.Binding
	SortLeft, SortRight, Reverse   key.Binding
	Faster, Slower, Group          key.Binding
	Detail, Back, PerCPU           key.Binding
	Load, Pin                      key.Binding
	NextStep, PrevStep             key.Binding
	Wakeups                        key.Binding
}

// New returns the default bindings.
func New() Map {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return Map{
		Quit:            b([]string{"q", "ctrl+c"}, "q", "quit"),
		Help:            b([]string{"?", "h", "f1"}, "?", "help"),
		Up:              b([]string{"up", "k"}, "↑/k", "up"),
		Down:            b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:          b([]string{"pgup"}, "PgUp", "page up"),
		PageDown:        b([]string{"pgdown"}, "PgDn", "page down"),
		Home:            b([]string{"home"}, "Home", "first row"),
		End:             b([]string{"end"}, "End", "last row"),
		Filter:          b([]string{"/"}, "/", "filter by name or PID"),
		Pause:           b([]string{"space"}, "space", "pause/resume"),
		ToggleProcesses: b([]string{"H"}, "H", "threads/processes"),
		SortLeft:        b([]string{"<"}, "<", "sort by column to the left"),
		SortRight:       b([]string{">"}, ">", "sort by column to the right"),
		Reverse:         b([]string{"r"}, "r", "reverse sort"),
		Faster:          b([]string{"-"}, "-", "refresh faster"),
		Slower:          b([]string{"+", "="}, "+", "refresh slower"),
		Group:           b([]string{"g"}, "g", "group thread pools by name"),
		Detail:          b([]string{"enter"}, "Enter", "thread detail"),
		Back:            b([]string{"esc"}, "Esc", "back / clear filter"),
		PerCPU:          b([]string{"c"}, "c", "per-CPU interrupts"),
		Load:            b([]string{"L"}, "L", "load generator panel"),
		Pin:             b([]string{"p"}, "p", "cycle load pinning"),
		NextStep:        b([]string{"n"}, "n", "demo: next step"),
		PrevStep:        b([]string{"N"}, "N", "demo: previous step"),
		Wakeups:         b([]string{"W"}, "W", "who wakes whom"),
	}
}

// ShortHelp is the footer's hints, most useful first.
func (m Map) ShortHelp() []key.Binding {
	return []key.Binding{m.Quit, m.Help, m.Filter, m.ToggleProcesses, m.SortRight, m.Group, m.Detail, m.PerCPU, m.Load, m.Pause}
}

// FullHelp is the help screen's columns.
func (m Map) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{m.Up, m.Down, m.PageUp, m.PageDown, m.Home, m.End, m.Detail, m.Back},
		{m.Filter, m.ToggleProcesses, m.Group, m.SortLeft, m.SortRight, m.Reverse, m.PerCPU, m.Wakeups},
		{m.Pause, m.Faster, m.Slower, m.Load, m.Pin, m.NextStep, m.PrevStep, m.Help, m.Quit},
	}
}
