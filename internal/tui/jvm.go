package tui

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// JVM is what the monitor knows to do with a HotSpot JVM (package jvm,
// through the composition root).
type JVM interface {
	// Notes are lines on what process pid's Java frames lack, none when
	// it is no JVM; perfMap says it has a perf map. Reads /proc only.
	Notes(pid int) (notes []string, perfMap bool)
	// AskPerfMap asks pid for a perf map through its attach mechanism
	// (seconds at worst) and says what it did.
	AskPerfMap(pid int) (string, error)
}

// jvmState is the detail view's process as a JVM: its notes, read when the
// view turns to another process and after a perf map was asked for.
type jvmState struct {
	pid    int
	asking bool
}

// jvmAskedMsg is a perf map request's outcome.
type jvmAskedMsg struct {
	pid  int
	text string
	err  error
}

// syncJVMNotes gives the detail view the notes of process pid, read again
// when force is set or pid is not the process they were read for.
func (m *Model) syncJVMNotes(pid int, force bool) {
	if m.opts.JVM == nil || m.replay != nil || (pid == m.jvm.pid && !force) {
		return
	}
	m.jvm.pid = pid
	notes, perfMap := m.opts.JVM.Notes(pid)
	if !perfMap && len(notes) > 0 {
		notes[0] += " (J asks it for one)"
	}
	m.detail.SetNotes(notes)
}

// askJVM asks the detail view's process for a perf map off the event
// loop: the JVM may take seconds to start its attach listener.
func (m *Model) askJVM() tea.Cmd {
	pid := m.shown.pid
	switch {
	case m.opts.JVM == nil || m.replay != nil:
		m.setStatus("", errors.New("asking a JVM for a perf map: not possible here (a replay, or another --proc)"))
		return nil
	case pid <= 0:
		m.setStatus("", errors.New("no process shown"))
		return nil
	case m.jvm.asking:
		return nil
	}
	m.jvm.asking = true
	m.setStatus(fmt.Sprintf("asking JVM %d for a perf map…", pid), nil)
	j := m.opts.JVM
	return func() tea.Msg {
		text, err := j.AskPerfMap(pid)
		return jvmAskedMsg{pid: pid, text: text, err: err}
	}
}

func (m *Model) handleJVMAsked(msg jvmAskedMsg) {
	m.jvm.asking = false
	m.setStatus(msg.text, msg.err)
	if msg.pid == m.shown.pid {
		m.syncJVMNotes(msg.pid, true)
	}
}
