package eventloop

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
)

// keyLog records the keys and background colours the loop passes on, and
// quits on the message "end".
type keyLog struct {
	keys []string
	bg   int
}

func (k *keyLog) Init() tea.Cmd { return nil }
func (k *keyLog) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		k.keys = append(k.keys, msg.String())
	case tea.BackgroundColorMsg:
		k.bg++
	case string:
		if msg == "end" {
			return k, tea.Quit
		}
	}
	return k, nil
}
func (k *keyLog) Render() string { return fmt.Sprint(k.keys, k.bg) }
func (k *keyLog) View() tea.View { return tea.NewView(k.Render()) }

// pieces are the events the input reader makes of s cut at i, when the
// rest comes after its escape timeout: the first piece given up on, the
// rest decoded on its own.
func pieces(s string, i int) []uv.Event {
	var evs []uv.Event
	for _, part := range []string{s[:i], s[i:]} {
		var d uv.EventDecoder
		b := []byte(part)
		for len(b) > 0 {
			n, ev := d.Decode(b)
			if n <= 0 {
				break
			}
			evs = append(evs, ev)
			b = b[n:]
		}
	}
	return evs
}

// endAfter quits once the terminal's events are read.
type endAfter struct{ *keyLog }

func (e endAfter) Init() tea.Cmd {
	return func() tea.Msg { time.Sleep(5 * escHold); return "end" }
}
func (e endAfter) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := e.keyLog.Update(msg)
	return e, cmd
}

func runEvents(t *testing.T, evs []uv.Event) *keyLog {
	t.Helper()
	m, err := loopOn(evs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loopOn runs the loop on evs, read before the model quits.
func loopOn(evs []uv.Event) (*keyLog, error) {
	term := newTerm()
	term.events = make(chan uv.Event, len(evs)+1)
	for _, e := range evs {
		term.events <- e
	}
	m := &keyLog{}
	done := make(chan error, 1)
	go func() {
		_, err := Run(term, endAfter{m})
		done <- err
	}()
	select {
	case err := <-done:
		return m, err
	case <-time.After(10 * time.Second):
		return nil, errors.New("the loop did not end")
	}
}

// A terminal reply cut anywhere by the reader's escape timeout reaches the
// model whole, never as keys: the background colour the monitor asks for
// at start (both terminators), and a mouse click.
func TestCutRepliesAreNotKeys(t *testing.T) {
	for _, c := range []struct {
		name, reply string
		bg          bool
	}{
		{"OSC 11, ST", "\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\", true},
		{"OSC 11, BEL", "\x1b]11;rgb:ffff/ffff/ffff\a", true},
		{"SGR mouse", "\x1b[<0;12;5M", false},
	} {
		// Each cut in a loop of its own, at once: each waits out escHold.
		var wg sync.WaitGroup
		for i := 1; i < len(c.reply); i++ {
			if strings.HasSuffix(c.reply, "\x1b\\") && i == len(c.reply)-1 {
				// Cut between ESC and \: the reader takes the reply
				// as ended at ESC; only a \ follows, bound to nothing.
				continue
			}
			wg.Go(func() {
				m, err := loopOn(pieces(c.reply, i))
				switch {
				case err != nil:
					t.Errorf("%s cut at %d: %v", c.name, i, err)
				case len(m.keys) > 0:
					t.Errorf("%s cut at %d: keys %q reached the model", c.name, i, m.keys)
				case c.bg && m.bg != 1:
					t.Errorf("%s cut at %d: %d background colours, want 1", c.name, i, m.bg)
				}
			})
		}
		wg.Wait()
	}
}

// The user's own keys still arrive: an Escape alone (after escHold), keys
// after a cut reply, and keys long after a reply whose rest never came.
func TestUserKeysPassTheJoiner(t *testing.T) {
	esc := uv.KeyPressEvent{Code: uv.KeyEscape}
	h := uv.KeyPressEvent{Code: 'h', Text: "H", Mod: uv.ModShift}
	if m := runEvents(t, []uv.Event{esc}); fmt.Sprint(m.keys) != "[esc]" {
		t.Errorf("a lone Escape: keys %q, want [esc]", m.keys)
	}
	if m := runEvents(t, []uv.Event{esc, h}); fmt.Sprint(m.keys) != "[esc H]" {
		t.Errorf("Escape then H: keys %q, want [esc H]", m.keys)
	}
	evs := append(pieces("\x1b]11;rgb:1c1c/1c1c/1c1c\a", 9), uv.KeyPressEvent{Code: 'q', Text: "q"})
	if m := runEvents(t, evs); fmt.Sprint(m.keys) != "[q]" || m.bg != 1 {
		t.Errorf("a cut reply then q: keys %q, %d background colours; want [q], 1", m.keys, m.bg)
	}
	// The rest never came: a second later, typing is the user's.
	var j replyJoiner
	now := time.Now()
	for _, e := range pieces("\x1b]11;rgb:1c1c/1c1c/1c1c\a", 9)[:1] {
		j.feed(e, now)
	}
	out, _ := j.feed(uv.KeyPressEvent{Code: 'c', Text: "c"}, now.Add(2*replyGap))
	if len(out) != 1 {
		t.Errorf("a key %v after the reply's gap: passed on %v, want the key", replyGap*2, out)
	}
	// A reply never ends: past replyMax bytes, keys are the user's again.
	j = replyJoiner{}
	j.feed(uv.UnknownEvent("\x1b]11;"), now)
	passed := 0
	for range 2 * replyMax {
		out, _ := j.feed(uv.KeyPressEvent{Code: 'x', Text: "x"}, now)
		passed += len(out)
	}
	if passed < replyMax {
		t.Errorf("%d of %d keys after an endless reply passed, want all past the first %d", passed, 2*replyMax, replyMax)
	}
}
