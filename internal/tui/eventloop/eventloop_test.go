package eventloop

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/google/go-cmp/cmp"
)

type fakeTerm struct {
	events   chan uv.Event
	lost     chan error
	mu       sync.Mutex
	frames   []string
	sizes    [][2]int
	restored bool
	// writeErr is what Display answers, as a hung-up pty answers EIO.
	writeErr error
}

func newTerm() *fakeTerm { return &fakeTerm{events: make(chan uv.Event, 8), lost: make(chan error, 1)} }

func (f *fakeTerm) Lost() <-chan error { return f.lost }

func (f *fakeTerm) Events() <-chan uv.Event { return f.events }
func (f *fakeTerm) Resize(w, h int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sizes = append(f.sizes, [2]int{w, h})
}
func (f *fakeTerm) Display(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frames = append(f.frames, s)
	return f.writeErr
}
func (f *fakeTerm) Restore() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restored = true
	return nil
}

// recorder keeps the string messages it gets, in order, and quits after
// want of them. Its frame is a fixed text unless show is set.
type recorder struct {
	init  tea.Cmd
	want  int
	got   []string
	show  bool
	onMsg func(string)
}

func (r recorder) Init() tea.Cmd { return r.init }
func (r recorder) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	s, ok := msg.(string)
	if !ok {
		return r, nil
	}
	if r.onMsg != nil {
		r.onMsg(s)
	}
	r.got = append(r.got, s)
	if len(r.got) >= r.want {
		return r, tea.Quit
	}
	return r, nil
}
func (r recorder) View() tea.View { return tea.NewView(r.Render()) }
func (r recorder) Render() string {
	if r.show {
		return strings.Join(r.got, ",")
	}
	return "same frame"
}

func say(s string, after time.Duration) tea.Cmd {
	return func() tea.Msg {
		time.Sleep(after)
		return s
	}
}

func run(t *testing.T, term *fakeTerm, m recorder) (recorder, error) {
	t.Helper()
	type result struct {
		m   Model
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := Run(term, m)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.m.(recorder), r.err
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not end")
	}
	return recorder{}, nil
}

func TestBatchRunsConcurrently(t *testing.T) {
	term := newTerm()
	// The slow one is listed first; run together, the fast one lands first.
	m, err := run(t, term, recorder{init: tea.Batch(say("slow", 200*time.Millisecond), say("fast", 0)), want: 2})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"fast", "slow"}, m.got); diff != "" {
		t.Errorf("batch order (-want +got)\n%s", diff)
	}
	if !term.restored {
		t.Error("terminal not restored after quit")
	}
}

func TestSequenceRunsInOrder(t *testing.T) {
	m, err := run(t, newTerm(), recorder{
		init: tea.Sequence(say("1", 100*time.Millisecond), say("2", 0), tea.Batch(say("3", 0)), tea.Sequence(say("4", 50*time.Millisecond), say("5", 0))),
		want: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5"}, m.got); diff != "" {
		t.Errorf("sequence order (-want +got)\n%s", diff)
	}
}

func TestPanicInCommandRestoresTerminal(t *testing.T) {
	term := newTerm()
	_, err := run(t, term, recorder{init: func() tea.Msg { panic("boom in a command") }, want: 1})
	var p *PanicError
	if !errors.As(err, &p) || p.Value != "boom in a command" || len(p.Stack) == 0 {
		t.Fatalf("err = %v, want a PanicError with the value and a stack", err)
	}
	if !term.restored {
		t.Error("terminal not restored after a panic")
	}
	if !strings.Contains(err.Error(), "terminal restored") || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q should be one line saying the terminal was restored", err)
	}
}

func TestPanicInUpdateRestoresTerminal(t *testing.T) {
	term := newTerm()
	_, err := run(t, term, recorder{init: say("x", 0), want: 2, onMsg: func(string) { panic("boom in Update") }})
	var p *PanicError
	if !errors.As(err, &p) || p.Value != "boom in Update" {
		t.Fatalf("err = %v, want the Update panic", err)
	}
	if !term.restored {
		t.Error("terminal not restored after a panic in Update")
	}
}

func TestSignalEndsLoopAndRestores(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		term := newTerm()
		// Run has subscribed before Init's command runs.
		kill := func() tea.Msg { _ = syscall.Kill(os.Getpid(), sig); return nil }
		_, err := run(t, term, recorder{init: kill, want: 1})
		if !errors.Is(err, ErrSignal) {
			t.Errorf("%v: err = %v, want ErrSignal", sig, err)
		}
		if !term.restored {
			t.Errorf("%v: terminal not restored", sig)
		}
	}
}

// An unchanged frame is not drawn again: an idle monitor must not write
// (and wake the terminal) on messages that change nothing.
func TestDrawsOnlyChangedFrames(t *testing.T) {
	term := newTerm()
	_, err := run(t, term, recorder{init: tea.Sequence(say("a", 0), say("b", 0), say("c", 0)), want: 3})
	if err != nil {
		t.Fatal(err)
	}
	// Three messages, one frame: the last Update quits before drawing.
	if diff := cmp.Diff([]string{"same frame"}, term.frames); diff != "" {
		t.Errorf("frames (-want +got)\n%s", diff)
	}
	term = newTerm()
	term.events <- uv.WindowSizeEvent{Width: 80, Height: 24}
	_, err = run(t, term, recorder{init: tea.Sequence(say("a", 50*time.Millisecond), say("b", 0), say("c", 0)), want: 3, show: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]int{{80, 24}}, term.sizes); diff != "" {
		t.Errorf("resizes (-want +got)\n%s", diff)
	}
	// The resize draws the (empty) frame; each changed frame follows.
	if diff := cmp.Diff([]string{"", "a", "a,b", "a,b,c"}, term.frames); diff != "" {
		t.Errorf("frames (-want +got)\n%s", diff)
	}
}

// A terminal that cannot be written to ends the loop: before, the error was
// dropped and the monitor kept drawing into a vanished pty for hours.
func TestWriteErrorEndsLoop(t *testing.T) {
	term := newTerm()
	term.writeErr = syscall.EIO
	// Without the write error this model would run until its 100th message.
	_, err := run(t, term, recorder{init: tea.Sequence(say("a", 0), say("b", 0)), want: 100, show: true})
	if !errors.Is(err, ErrTerminalLost) || !errors.Is(err, syscall.EIO) {
		t.Errorf("err = %v, want ErrTerminalLost wrapping EIO", err)
	}
	if diff := cmp.Diff([]string{"a"}, term.frames); diff != "" {
		t.Errorf("frames after the failed write (-want +got)\n%s", diff)
	}
	if !term.restored {
		t.Error("terminal not restored")
	}
}

// The input side closing (a hung-up tty reads EOF or EIO) ends the loop
// even when nothing is drawn.
func TestLostInputEndsLoop(t *testing.T) {
	term := newTerm()
	term.lost <- syscall.EIO
	_, err := run(t, term, recorder{want: 1})
	if !errors.Is(err, ErrTerminalLost) || !errors.Is(err, syscall.EIO) {
		t.Errorf("err = %v, want ErrTerminalLost wrapping EIO", err)
	}
	if !term.restored {
		t.Error("terminal not restored")
	}
}
