package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/sys/unix"
)

// Options configure Run.
type Options struct {
	Source       Source
	Interval     time.Duration
	HotThreshold float64
	NoColor      bool
	Version      string

	// IsFatal says whether a sampling error ends the monitor (every --pid
	// target gone) rather than being shown and retried. Nil: all are fatal.
	IsFatal func(error) bool
	// Demo runs the scripted tour of the load generator.
	Demo bool
	// DemoStep is how long each demo step lasts.
	DemoStep time.Duration
	// Load starts ctxtop's own workloads; nil disables the load panel.
	Load LoadStarter

	// Input and Output replace the terminal, for tests.
	Input  io.Reader
	Output io.Writer
	// FixedBackground skips asking the terminal for its background colour.
	FixedBackground bool
}

// fps caps how often bubbletea's renderer wakes up to compare frames. Its
// default of 60 wakes the process 60 times a second even when idle, which
// for a context-switch monitor is the very noise it measures. At 20 a key
// still answers within 50 ms, below what a person notices.
const fps = 20

// Run opens the monitor on the terminal and returns the error that ended
// it, nil when the user quit.
func Run(o Options) error {
	if o.Source == nil {
		return errors.New("tui: no source")
	}
	host, kernel := hostFacts()
	m := New(o, host, kernel)
	popts := []tea.ProgramOption{tea.WithFPS(fps)}
	if o.Input != nil {
		popts = append(popts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		popts = append(popts, tea.WithOutput(o.Output))
	}
	p := tea.NewProgram(m, popts...)

	// bubbletea turns SIGINT and SIGTERM into a quit; SIGHUP (the SSH
	// session dropped) would kill us with the terminal still in raw mode.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	stop := make(chan struct{})
	go func() {
		select {
		case <-hup:
			p.Quit()
		case <-stop:
		}
	}()
	final, err := p.Run()
	signal.Stop(hup)
	close(stop)
	if fm, ok := final.(Model); ok {
		fm.stopLoad()
		if err == nil {
			err = fm.exitErr
		}
	}
	if errors.Is(err, tea.ErrInterrupted) {
		return nil
	}
	if errors.Is(err, tea.ErrProgramPanic) {
		return fmt.Errorf("internal error (terminal restored): %w", err)
	}
	return err
}

// hostFacts are read once: they do not change while we run.
func hostFacts() (host, kernel string) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		h, _ := os.Hostname()
		return h, ""
	}
	return unix.ByteSliceToString(u.Nodename[:]), unix.ByteSliceToString(u.Release[:])
}
