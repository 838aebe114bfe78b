package tui

import (
	"context"
	"errors"
	"os"
	"runtime"
	"time"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/selfprio"
	"github.com/ctxtop/ctxtop/internal/tui/eventloop"
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
	// Load runs workloads for the load panel and the demo; nil means
	// ctxtop's own (NewLoader).
	Load Loader
	// Replay plays a recording instead of sampling; Source is unused.
	Replay Replay
	// FixedBackground skips asking the terminal for its background colour.
	FixedBackground bool
	// ProcRoot is the procfs the host facts are read from; "" is /proc.
	ProcRoot string
	// HidePID is the procfs's hidepid mode when it hides other users'
	// processes from this user: the header says so and the remainder row
	// is labelled as theirs.
	HidePID string
	// Wakeups attaches the wake-up tracer while a view that shows its
	// figures is open; nil when there is none. The Source then carries
	// them in Snapshot.Wakeups.
	Wakeups WakeupSwitch
}

// Run opens the monitor on the terminal and returns the error that ended
// it, nil when the user quit or a signal (SIGTERM, SIGHUP) ended it.
//
// The event loop (package eventloop) replaces tea.Program so that an idle
// monitor wakes once per refresh instead of at the renderer's frame rate.
func Run(o Options) error {
	if o.Source == nil && o.Replay == nil {
		return errors.New("tui: no source")
	}
	if o.Load == nil {
		o.Load = NewLoader()
	}
	var facts hostinfo.Facts
	if o.Replay != nil {
		// The recording's host, not this one.
		facts = o.Replay.Facts()
	} else {
		facts = hostinfo.Read(context.Background(), o.ProcRoot)
	}
	m := New(o, facts.Hostname, facts.Kernel)
	m.header.SetFacts(facts)

	// One P: the monitor's goroutines then hand off on one thread instead
	// of waking idle ones, which measured 3.8 instead of 16.8 switches/s.
	// A load run needs its threads free, so it raises this while it runs.
	m.procs = runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(m.procs)

	// Ahead of other processes when it may be (see selfprio): a load's
	// wake-ups then no longer preempt the sampling thread.
	if o.Replay == nil {
		selfprio.Raise()
	}

	t := uv.DefaultTerminal()
	if err := t.Start(); err != nil {
		return err
	}
	scr := t.Screen()
	scr.SetColorProfile(colorprofile.Detect(os.Stdout, os.Environ()))
	scr.EnterAltScreen()
	scr.HideCursor()
	if !o.NoColor && !o.FixedBackground {
		_, _ = t.Write([]byte(ansi.RequestBackgroundColor))
	}
	_ = scr.Flush()

	// eventloop.Run restores the terminal before it returns, whatever ended it.
	final, err := eventloop.Run(uvTerminal{t}, m)
	fm := final.(Model)
	if fm.load != nil {
		fm.stopLoad()
	}
	var p *eventloop.PanicError
	if errors.As(err, &p) {
		// A bug: the stack goes to stderr for the report, the error stays one line.
		os.Stderr.Write(p.Stack)
	}
	if errors.Is(err, eventloop.ErrSignal) {
		err = nil
	}
	if err == nil {
		err = fm.exitErr
	}
	return err
}

// uvTerminal is the eventloop's view of an ultraviolet terminal.
type uvTerminal struct{ t *uv.Terminal }

func (u uvTerminal) Events() <-chan uv.Event { return u.t.Events() }
func (u uvTerminal) Resize(w, h int)         { u.t.Screen().Resize(w, h) }
func (u uvTerminal) Display(frame string) error {
	return u.t.Screen().Display(uv.NewStyledString(frame))
}
func (u uvTerminal) Restore() error {
	scr := u.t.Screen()
	scr.ExitAltScreen()
	scr.ShowCursor()
	return u.t.Stop()
}
