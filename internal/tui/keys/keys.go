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
	Wakeups                        key.Binding
	// JVMPerfMap asks the detail view's JVM for a perf map.
	JVMPerfMap key.Binding
	// htop's habits: the process tree and acting on the selected task.
	Tree, Fold, Unfold key.Binding
	Signal, Affinity   key.Binding
	NiceDown, NiceUp   key.Binding
	// Columns opens the panel where columns are shown and hidden.
	Columns key.Binding
}

// New returns the default bindings.
func New() Map {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	// Descriptions stay within 19 characters: the help screen sets the
	// whole list in three columns at 80x24.
	return Map{
		Quit:            b([]string{"q", "ctrl+c", "f10"}, "q/^C", "quit (F10 too)"),
		Help:            b([]string{"?", "h", "f1"}, "?/F1", "help"),
		Up:              b([]string{"up", "k"}, "↑/k", "up"),
		Down:            b([]string{"down", "j"}, "↓/j", "down"),
		PageUp:          b([]string{"pgup"}, "PgUp", "page up"),
		PageDown:        b([]string{"pgdown"}, "PgDn", "page down"),
		Home:            b([]string{"home"}, "Home", "top, stay on top"),
		End:             b([]string{"end"}, "End", "last row"),
		Filter:          b([]string{"/", "f3"}, "/ F3", "filter name or PID"),
		Pause:           b([]string{"space"}, "space", "pause/resume"),
		ToggleProcesses: b([]string{"H"}, "H", "thread/proc/cgroup"),
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
		Wakeups:         b([]string{"W"}, "W", "who wakes whom"),
		JVMPerfMap:      b([]string{"J"}, "J", "JVM: ask perf map"),
		// k stays "up" (vim's habit, older here than htop's kill): F9
		// signals, as in htop, behind a confirmation.
		Tree:     b([]string{"f5", "t"}, "F5/t", "process tree"),
		Fold:     b([]string{"left"}, "←", "tree: fold"),
		Unfold:   b([]string{"right"}, "→", "tree: unfold"),
		Signal:   b([]string{"f9"}, "F9", "send a signal"),
		Affinity: b([]string{"a"}, "a", "set CPU affinity"),
		NiceDown: b([]string{"f7"}, "F7", "nice -1 (sooner)"),
		NiceUp:   b([]string{"f8"}, "F8", "nice +1 (later)"),
		// htop's F2 Setup; its C too, free here.
		Columns: b([]string{"f2", "C"}, "F2/C", "choose columns"),
	}
}

// ShortHelp is the footer's hints, most useful first.
func (m Map) ShortHelp() []key.Binding {
	return []key.Binding{m.Quit, m.Help, m.Filter, m.ToggleProcesses, m.SortRight, m.Group, m.Detail, m.PerCPU, m.Load, m.Pause}
}

// FullHelp is the help screen's columns. Pairs that mirror each other
// share a line, so that every key and the legend fit 80x24; the demo's
// keys are listed by the demo itself (DemoHelp).
func (m Map) FullHelp() [][]key.Binding {
	pair := func(a, b key.Binding, k, desc string) key.Binding {
		p := key.NewBinding(key.WithKeys(append(a.Keys(), b.Keys()...)...), key.WithHelp(k, desc))
		p.SetEnabled(a.Enabled() || b.Enabled())
		return p
	}
	return [][]key.Binding{
		{pair(m.Up, m.Down, "↑↓jk", "move"), m.PageUp, m.PageDown, m.Home, m.End, m.Detail, m.Back, m.Filter, m.ToggleProcesses},
		{m.Group, m.Tree, pair(m.Fold, m.Unfold, "← →", "tree: fold/unfold"), pair(m.SortLeft, m.SortRight, "< >", "sort column ← / →"), m.Reverse, m.PerCPU, m.Wakeups, m.JVMPerfMap, m.Signal, m.Affinity},
		{pair(m.NiceDown, m.NiceUp, "F7 F8", "nice -1 / +1"), m.Pause, pair(m.Faster, m.Slower, "- +", "refresh interval"), m.Load, m.LoadMode, m.LoadStart, m.Pin, m.Columns, m.Help, m.Quit},
	}
}

// DemoHelp is the demo's own keys, listed above the others in the demo.
func (m Map) DemoHelp() []key.Binding { return []key.Binding{m.NextStep, m.PrevStep} }
