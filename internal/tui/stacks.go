package tui

import tea "charm.land/bubbletea/v2"

// StacksSwitch is the stack tracer as the monitor drives it: attached while
// the detail view is open, tracing the thread shown first.
type StacksSwitch interface {
	Want(on bool)
	Apply()
	Focus(tid int)
}

// syncStacks asks for the stack tracer on or off, as the detail view is
// open or not, and returns cmd with the (slow) attach added.
func (m *Model) syncStacks(cmd tea.Cmd) tea.Cmd {
	sw := m.opts.Stacks
	if sw == nil {
		return cmd
	}
	want := m.underView() == viewDetail
	if want {
		sw.Focus(m.detail.TID())
	}
	if want == m.stacksOn {
		return cmd
	}
	m.stacksOn = want
	sw.Want(want)
	if !want {
		sw.Focus(0)
		m.detail.SetStacks(nil)
	}
	return tea.Batch(cmd, func() tea.Msg { sw.Apply(); return nil })
}
