package tui

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/settings"
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
	// Load runs workloads for the load panel and the demo; nil leaves
	// the panel out and the demo's steps without a load. The composition
	// root passes ctxtop's own.
	Load Loader
	// Replay plays a recording instead of sampling; Source is unused.
	Replay Replay
	// FixedBackground skips asking the terminal for its background colour.
	FixedBackground bool
	// Facts frame the header: this host's, read by the caller (a replay
	// shows its recording's instead).
	Facts hostinfo.Facts
	// HidePID is the procfs's hidepid mode when it hides other users'
	// processes from this user: the header says so and the remainder row
	// is labelled as theirs.
	HidePID string
	// Wakeups attaches the wake-up tracer while a view that shows its
	// figures is open; nil when there is none. The Source then carries
	// them in Snapshot.Wakeups.
	Wakeups WakeupSwitch
	// Stacks attaches the stack tracer while the detail view is open; nil
	// when there is none. The Source then carries them in Snapshot.Stacks.
	Stacks StacksSwitch

	// Actions signal, pin and renice the selected task (Kernel{} live);
	// nil when they are not possible, NoActionsWhy saying why (a replay
	// says so itself).
	Actions      Actions
	NoActionsWhy string
	// JVM says what a JVM's stacks lack and asks it for a perf map (J in
	// the detail view); nil when it cannot (a replay, another --proc).
	JVM JVM
	// Settings is the view to start with (package settings, the command
	// line already applied); SaveSettings, when set, is given the view
	// on screen when the monitor ends, however it ends.
	Settings     settings.Settings
	SaveSettings func(settings.Settings)
	// SettingsNote says what of Settings came from the saved file, shown
	// in the footer at start: a filter or view the user forgot they left
	// would otherwise make a partial table look like the host's.
	SettingsNote string
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
	facts := o.Facts
	if o.Replay != nil {
		// The recording's host, not this one.
		facts = o.Replay.Facts()
	}
	m := New(o, facts.Hostname, facts.Kernel)
	m.header.SetFacts(facts)

	tty := newWatchedTTY(os.Stdin, os.Stdout)
	t := uv.NewTerminal(uv.NewConsole(tty.in, tty.out, os.Environ()), nil)
	if err := t.Start(); err != nil {
		return err
	}
	scr := t.Screen()
	scr.SetColorProfile(colorprofile.Detect(os.Stdout, os.Environ()))
	scr.EnterAltScreen()
	scr.HideCursor()
	// Clicks and the wheel (htop's habit); the screen turns them off
	// again when the terminal is restored. Click mode reports no motion,
	// so a mouse moved over the monitor wakes nothing.
	scr.SetMouseMode(uv.MouseModeClick)
	scr.SetMouseEncoding(uv.MouseEncodingSGR)
	if !o.NoColor && !o.FixedBackground {
		_, _ = t.Write([]byte(ansi.RequestBackgroundColor))
	}
	_ = scr.Flush()

	// eventloop.Run restores the terminal before it returns, whatever ended it.
	final, err := eventloop.Run(uvTerminal{t, tty}, m)
	fm := final.(Model)
	if fm.load != nil {
		fm.stopLoad()
	}
	if o.SaveSettings != nil {
		o.SaveSettings(fm.Settings())
	}
	var p *eventloop.PanicError
	if errors.As(err, &p) {
		// A bug: the stack goes to stderr for the report, the error stays one line.
		os.Stderr.Write(p.Stack)
	}
	// eventloop.ErrTerminalLost stays an error: nobody may be left to
	// read it on that terminal, but the non-zero exit is for whoever
	// started the monitor.
	if errors.Is(err, eventloop.ErrSignal) {
		err = nil
	}
	if err == nil {
		err = fm.exitErr
	}
	return err
}

// uvTerminal is the eventloop's view of an ultraviolet terminal.
type uvTerminal struct {
	t   *uv.Terminal
	tty *watchedTTY
}

func (u uvTerminal) Events() <-chan uv.Event { return u.t.Events() }
func (u uvTerminal) Resize(w, h int)         { u.t.Screen().Resize(clampSize(w, h)) }
func (u uvTerminal) Lost() <-chan error      { return u.tty.lost }
func (u uvTerminal) Display(frame string) error {
	if err := u.t.Screen().Display(uv.NewStyledString(frame)); err != nil {
		return err
	}
	// The screen drops the error of its renderer's write, which carries
	// most of a frame: ask the file itself.
	return u.tty.writeErr()
}
func (u uvTerminal) Restore() error {
	scr := u.t.Screen()
	scr.ExitAltScreen()
	scr.ShowCursor()
	return u.t.Stop()
}

// watchedTTY is the monitor's stdin and stdout, keeping how they failed:
// ultraviolet's reader goroutine ends on a read error without telling
// anyone, and its screen drops write errors, so a terminal that vanished
// without a SIGHUP (the monitor under setsid, its tmux server killed) was
// never noticed.
type watchedTTY struct {
	in, out *watchedFile
	lost    chan error
	mu      sync.Mutex
	werr    error
}

func newWatchedTTY(in, out *os.File) *watchedTTY {
	w := &watchedTTY{lost: make(chan error, 1)}
	// Only a terminal's end of input means it is gone: `ctxtop </dev/null`
	// reads EOF at once and must keep running (without keys) as before.
	_, err := unix.IoctlGetTermios(int(in.Fd()), unix.TCGETS)
	inIsTTY := err == nil
	w.in = &watchedFile{File: in, failed: func(err error) {
		if !inIsTTY {
			return
		}
		select {
		case w.lost <- err:
		default: // already reported
		}
	}}
	w.out = &watchedFile{File: out, failed: func(err error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.werr == nil {
			w.werr = err
		}
	}}
	return w
}

func (w *watchedTTY) writeErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.werr
}

// watchedFile is an *os.File (ultraviolet polls its descriptor) whose
// Read and Write report their errors.
type watchedFile struct {
	*os.File
	failed func(error)
}

func (f *watchedFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if err != nil {
		f.failed(err)
	}
	return n, err
}

func (f *watchedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err != nil {
		f.failed(err)
	}
	return n, err
}
