package tui

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
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
	// Load runs workloads for the load panel and the demo; nil means
	// ctxtop's own (NewLoader).
	Load Loader
	// Replay plays a recording instead of sampling; Source is unused.
	Replay Replay
	// FixedBackground skips asking the terminal for its background colour.
	FixedBackground bool
}

// Run opens the monitor on the terminal and returns the error that ended
// it, nil when the user quit.
//
// It drives the model itself on ultraviolet, the terminal layer under
// bubbletea, instead of tea.Program: bubbletea v2.1's renderer flushes from
// a fixed-rate ticker for the program's whole life (60/s by default, and
// WithFPS cannot go below 1), which cost 120 context switches a second at
// 20 FPS here — a context-switch monitor must not be its own top entry.
// This loop draws only after a message changed the view, so a key is
// answered at once and an idle monitor wakes once per refresh.
func Run(o Options) error {
	if o.Source == nil && o.Replay == nil {
		return errors.New("tui: no source")
	}
	if o.Load == nil {
		o.Load = NewLoader()
	}
	host, kernel := hostFacts()
	m := New(o, host, kernel)

	// One P: the monitor's goroutines then hand off on one thread instead
	// of waking idle ones, which measured 3.8 instead of 16.8 switches/s.
	// A load run needs its threads free, so it raises this while it runs.
	m.procs = runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(m.procs)

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

	final, err := loop(t, m)
	// Restore the terminal before anything is printed.
	scr.ExitAltScreen()
	scr.ShowCursor()
	_ = t.Stop()
	if final.load != nil {
		final.stopLoad()
	}
	var p *panicError
	if errors.As(err, &p) {
		// A bug: the stack goes to stderr for the report, the error stays one line.
		os.Stderr.Write(p.stack)
	}
	if err == nil {
		err = final.exitErr
	}
	return err
}

type panicMsg struct {
	val   any
	stack []byte
}

type panicError struct {
	val   any
	stack []byte
}

func (p *panicError) Error() string {
	return fmt.Sprintf("internal error (terminal restored): %v", p.val)
}

// loop is the event loop: one goroutine owns the model; commands run in
// their own goroutines and send their messages back.
func loop(t *uv.Terminal, m Model) (final Model, err error) {
	msgs := make(chan tea.Msg, 64)
	sigs := make(chan os.Signal, 1)
	// SIGINT arrives only when ^C is not read as a key; SIGTERM and SIGHUP
	// (the SSH session dropped) must restore the terminal too.
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			defer func() {
				if r := recover(); r != nil {
					msgs <- panicMsg{r, debug.Stack()}
				}
			}()
			switch msg := c().(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					run(c)
				}
			default:
				msgs <- msg
			}
		}()
	}

	defer func() {
		if r := recover(); r != nil {
			final, err = m, &panicError{r, debug.Stack()}
		}
	}()

	run(m.Init())
	scr := t.Screen()
	last := ""
	for {
		var msg tea.Msg
		select {
		case ev := <-t.Events():
			msg = translate(ev)
			if ws, ok := msg.(tea.WindowSizeMsg); ok {
				scr.Resize(ws.Width, ws.Height)
				last = ""
			}
		case msg = <-msgs:
		case <-sigs:
			return m, nil
		}
		switch msg := msg.(type) {
		case nil:
			continue
		case tea.QuitMsg:
			return m, nil
		case panicMsg:
			return m, &panicError{msg.val, msg.stack}
		}
		next, cmd := m.Update(msg)
		m = next.(Model)
		run(cmd)
		// Draw only when the frame changed: this is what keeps an idle
		// monitor from waking up between refreshes.
		if s := m.Render(); s != last {
			last = s
			_ = scr.Display(uv.NewStyledString(s))
		}
	}
}

// translate turns terminal events into the messages the model handles.
func translate(ev uv.Event) tea.Msg {
	switch e := ev.(type) {
	case uv.KeyPressEvent:
		return tea.KeyPressMsg(e)
	case uv.WindowSizeEvent:
		return tea.WindowSizeMsg(e)
	case uv.BackgroundColorEvent:
		return tea.BackgroundColorMsg(e)
	}
	return nil
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
