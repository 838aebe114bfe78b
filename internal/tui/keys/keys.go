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
	Load, LoadMode, LoadStart, Pin key.Binding
	NextStep, PrevStep             key.Binding
}

// New returns the default bindings.
func New() Map {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	// Descriptions stay within 19 characters: the help screen sets the
	// whole list in three columns at 80x24.
	return Map{
		Quit:            b([]string{"q", "ctrl+c"}, "q/^C", "quit"),
		Help:            b([]string{"?", "h", "f1"}, "?/h", "help"),
		Up:              b([]string{"up", "k"}, "↑/k", "up"),
		Down:            b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:          b([]string{"pgup"}, "PgUp", "page up"),
		PageDown:        b([]string{"pgdown"}, "PgDn", "page down"),
		Home:            b([]string{"home"}, "Home", "top, stay on top"),
		End:             b([]string{"end"}, "End", "last row"),
		Filter:          b([]string{"/"}, "/", "filter name or PID"),
		Pause:           b([]string{"space"}, "space", "pause/resume"),
		ToggleProcesses: b([]string{"H"}, "H", "threads/processes"),
		SortLeft:        b([]string{"<"}, "<", "sort column left"),
		SortRight:       b([]string{">"}, ">", "sort column right"),
		Reverse:         b([]string{"r"}, "r", "reverse sort"),
		Faster:          b([]string{"-"}, "-", "refresh faster"),
		Slower:          b([]string{"+", "="}, "+", "refresh slower"),
		Group:           b([]string{"g"}, "g", "group by name"),
		Detail:          b([]string{"enter"}, "Enter", "thread detail"),
		Back:            b([]string{"esc"}, "Esc", "back/clear filter"),
		PerCPU:          b([]string{"c"}, "c", "per-CPU interrupts"),
		Load:            b([]string{"L"}, "L", "load panel"),
		LoadMode:        b([]string{"m"}, "m", "load: next mode"),
		LoadStart:       b([]string{"s"}, "s", "load: start/stop"),
		Pin:             b([]string{"p"}, "p", "load: pinning"),
		NextStep:        b([]string{"n"}, "n", "demo: next step"),
		PrevStep:        b([]string{"N"}, "N", "demo: step back"),
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
		{m.Filter, m.ToggleProcesses, m.Group, m.SortLeft, m.SortRight, m.Reverse, m.PerCPU},
		{m.Pause, m.Faster, m.Slower, m.Load, m.LoadMode, m.LoadStart, m.Pin, m.NextStep, m.PrevStep, m.Help, m.Quit},
	}
}
