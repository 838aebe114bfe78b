// Package eventloop drives a bubbletea model on a terminal without
// tea.Program. bubbletea v2.1's renderer flushes from a fixed-rate ticker
// for the program's whole life (60/s by default, and WithFPS cannot go below
// 1), which cost 120 context switches a second at 20 FPS — a context-switch
// monitor must not be its own top entry. This loop draws only after a
// message changed the frame, so a key is answered at once and an idle
// monitor wakes once per refresh.
//
// One goroutine owns the model; each command runs in a goroutine of its own
// and sends its message back. tea.Batch runs its commands concurrently,
// tea.Sequence one after another, in order, as tea.Program does.
package eventloop

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
)

// Model is what the loop drives: a bubbletea model that can also render
// itself to a string.
type Model interface {
	Init() tea.Cmd
	Update(tea.Msg) (tea.Model, tea.Cmd)
	// Render is the whole frame; the loop redraws only when it changed.
	Render() string
}

// Terminal is the screen the loop draws on and reads events from.
type Terminal interface {
	Events() <-chan uv.Event
	// Resize tells the screen its new size before the next frame.
	Resize(width, height int)
	// Display draws frame; an error means the terminal cannot be written
	// to (a hung-up pty answers EIO) and ends the loop.
	Display(frame string) error
	// Lost yields once the terminal's input is gone for good (end of file
	// or a read error on the tty): a terminal that vanished without
	// SIGHUP, as one under setsid does, is noticed here at once.
	Lost() <-chan error
	// Restore gives the terminal back as it was (main screen, cursor, modes).
	Restore() error
}

// PanicError is a panic in Update, Render or a command, recovered so the
// terminal is restored before the program reports it.
type PanicError struct {
	Value any
	Stack []byte
}

func (p *PanicError) Error() string {
	return fmt.Sprintf("internal error (terminal restored): %v", p.Value)
}

// Signals end the loop: SIGINT arrives only when ^C is not read as a key;
// SIGTERM and SIGHUP (the SSH session dropped) must restore the terminal too.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// ErrSignal wraps the signal that ended the loop.
var ErrSignal = errors.New("ended by signal")

// ErrTerminalLost wraps the read or write error that ended the loop: the
// terminal is gone, and a monitor that kept drawing into it would spin on
// EIO at high priority with no one to see it.
var ErrTerminalLost = errors.New("terminal lost")

// Run drives m until it returns tea.Quit, a signal in Signals arrives
// (error wraps ErrSignal), the terminal is lost (ErrTerminalLost) or
// something panics (*PanicError). Whatever ended
// it, the terminal is restored before Run returns; the model is the last
// one Update returned.
func Run(t Terminal, m Model) (final Model, err error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, Signals...)
	defer signal.Stop(sigs)
	defer func() {
		if rerr := t.Restore(); err == nil {
			err = rerr
		}
	}()
	return loop(t, m, sigs)
}

type panicMsg struct {
	val   any
	stack []byte
}

var cmdType = reflect.TypeFor[tea.Cmd]()

// commands returns the commands of a tea.Batch or tea.Sequence message and
// whether they run in order. tea.Sequence's message type is unexported, so it
// is recognised by its shape: a slice of tea.Cmd.
func commands(msg tea.Msg) (cmds []tea.Cmd, ordered, ok bool) {
	if b, isBatch := msg.(tea.BatchMsg); isBatch {
		return b, false, true
	}
	v := reflect.ValueOf(msg)
	if !v.IsValid() || v.Kind() != reflect.Slice || v.Type().Elem() != cmdType {
		return nil, false, false
	}
	cmds = make([]tea.Cmd, v.Len())
	for i := range cmds {
		cmds[i], _ = v.Index(i).Interface().(tea.Cmd)
	}
	return cmds, true, true
}

func loop(t Terminal, m Model, sigs <-chan os.Signal) (final Model, err error) {
	msgs := make(chan tea.Msg, 64)
	recoverTo := func() {
		if r := recover(); r != nil {
			msgs <- panicMsg{r, debug.Stack()}
		}
	}
	// exec runs c where it is called and sends what it yields.
	var exec func(tea.Cmd)
	exec = func(c tea.Cmd) {
		if c == nil {
			return
		}
		msg := c()
		if cmds, ordered, ok := commands(msg); ok {
			for _, c := range cmds {
				if ordered {
					exec(c)
				} else {
					go func() { defer recoverTo(); exec(c) }()
				}
			}
			return
		}
		if msg != nil {
			msgs <- msg
		}
	}
	run := func(c tea.Cmd) {
		if c != nil {
			go func() { defer recoverTo(); exec(c) }()
		}
	}

	defer func() {
		if r := recover(); r != nil {
			final, err = m, &PanicError{r, debug.Stack()}
		}
	}()

	run(m.Init())
	last, redraw := "", false
	var (
		replies replyJoiner
		// queue holds what one terminal event became, taken in order.
		queue   []uv.Event
		escWait <-chan time.Time
	)
	for {
		var msg tea.Msg
		var ev uv.Event
		if len(queue) > 0 {
			ev, queue = queue[0], queue[1:]
		} else {
			select {
			case e := <-t.Events():
				var hold bool
				queue, hold = replies.feed(e, time.Now())
				escWait = nil
				if hold {
					escWait = time.After(escHold)
				}
				continue
			case <-escWait:
				escWait, queue = nil, replies.flush()
				continue
			case msg = <-msgs:
			case s := <-sigs:
				return m, fmt.Errorf("%w: %v", ErrSignal, s)
			case err := <-t.Lost():
				return m, fmt.Errorf("%w: %w", ErrTerminalLost, err)
			}
		}
		if ev != nil {
			msg = Translate(ev)
			if ws, ok := msg.(tea.WindowSizeMsg); ok {
				// A resized screen is blank: draw even an unchanged frame.
				t.Resize(ws.Width, ws.Height)
				redraw = true
			}
		}
		switch msg := msg.(type) {
		case nil:
			continue
		case tea.QuitMsg:
			return m, nil
		case panicMsg:
			return m, &PanicError{msg.val, msg.stack}
		}
		next, cmd := m.Update(msg)
		m = next.(Model)
		run(cmd)
		// Draw only when the frame changed: this is what keeps an idle
		// monitor from waking up between refreshes.
		if s := m.Render(); s != last || redraw {
			last, redraw = s, false
			if err := t.Display(s); err != nil {
				return m, fmt.Errorf("%w: %w", ErrTerminalLost, err)
			}
		}
	}
}

// Translate turns terminal events into the messages models handle; nil for
// events they do not.
func Translate(ev uv.Event) tea.Msg {
	switch e := ev.(type) {
	case uv.KeyPressEvent:
		return tea.KeyPressMsg(e)
	case uv.WindowSizeEvent:
		return tea.WindowSizeMsg(e)
	case uv.BackgroundColorEvent:
		return tea.BackgroundColorMsg(e)
	case uv.MouseClickEvent:
		return tea.MouseClickMsg(e)
	case uv.MouseWheelEvent:
		return tea.MouseWheelMsg(e)
	}
	return nil
}
