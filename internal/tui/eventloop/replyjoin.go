package eventloop

import (
	"time"

	uv "github.com/charmbracelet/ultraviolet"
)

// A terminal's reply (the background colour the monitor asks for at start,
// a mouse report) can reach the input reader in two pieces: over SSH, or
// from a terminal starved of CPU, the rest may come later than the
// reader's escape timeout. The reader then gives up on the first piece and
// decodes the rest as typed keys: `]11;rgb:1c1c/1c1c/1c1c` is r (reverse
// sort), g (group), c (per-CPU view) and / (filter), and a mouse report's
// `<` moves the sort. The monitor would open in a view nobody chose.
// replyJoiner puts such a reply back together before any key reaches the
// model: the bytes after a cut introducer are the reply's, not the user's.

const (
	// replyGap bounds the wait for the rest of a cut reply; keys typed
	// later are the user's again.
	replyGap = time.Second
	// escHold is how long a lone Escape waits for a ']' or '[' that would
	// make it the start of a cut reply; the reader has already waited its
	// own escape timeout (50 ms) before deciding it was alone.
	escHold = 100 * time.Millisecond
	// replyMax bounds a reply: a colour reply or a mouse report is under
	// 40 bytes; past this the keys are the user's again.
	replyMax = 64
)

type replyJoiner struct {
	// buf holds the reply so far, from its ESC; nil when none is open.
	buf  []byte
	last time.Time
	// heldEsc is a lone Escape not yet passed on (see escHold).
	heldEsc bool
}

// feed takes one event from the reader and returns the events to pass on,
// in order, and whether an Escape is now held: the caller passes it on with
// flush if no event follows within escHold.
func (j *replyJoiner) feed(ev uv.Event, now time.Time) (out []uv.Event, holding bool) {
	if j.buf != nil && now.Sub(j.last) > replyGap {
		j.buf = nil
	}
	k, isKey := ev.(uv.KeyPressEvent)
	if j.heldEsc {
		j.heldEsc = false
		if isKey && (k.Text == "]" || k.Text == "[") && k.Mod == 0 {
			j.open("\x1b"+k.Text, now)
			return nil, false
		}
		out = append(out, uv.KeyPressEvent{Code: uv.KeyEscape})
	}
	if j.buf != nil {
		if !isKey {
			// A resize or anything else between the pieces: passed on,
			// the reply stays open.
			return append(out, ev), false
		}
		if done, ok := j.add(k); ok {
			j.last = now
			if done {
				out = append(out, j.decode()...)
			}
			return out, false
		}
		// Not a reply's byte: the user's key. The partial reply is dropped.
		j.buf = nil
		return append(out, ev), false
	}
	switch e := ev.(type) {
	case uv.UnknownEvent:
		// The first piece of a cut reply, as the reader gives it up.
		if s := string(e); cut(s) {
			j.open(s, now)
			return out, false
		}
	case uv.KeyPressEvent:
		switch {
		case e.Code == uv.KeyEscape && e.Mod == 0:
			j.heldEsc = true
			return out, true
		case e.Text == "" && e.Mod == uv.ModAlt && (e.Code == ']' || e.Code == '['):
			// ESC and the introducer's second byte, cut after it.
			j.open("\x1b"+string(e.Code), now)
			return out, false
		}
	}
	return append(out, ev), false
}

// flush passes on a held Escape that no reply followed.
func (j *replyJoiner) flush() []uv.Event {
	if !j.heldEsc {
		return nil
	}
	j.heldEsc = false
	return []uv.Event{uv.KeyPressEvent{Code: uv.KeyEscape}}
}

func (j *replyJoiner) open(s string, now time.Time) {
	j.buf, j.last = append(make([]byte, 0, 64), s...), now
}

// add appends k to the open reply; ok is false when k cannot be part of
// it, done true when k ended it.
func (j *replyJoiner) add(k uv.KeyPressEvent) (done, ok bool) {
	if len(j.buf) >= replyMax {
		j.buf = nil
		return false, false
	}
	csi := j.buf[1] == '['
	var b byte
	switch {
	case len(k.Text) == 1 && k.Text[0] >= 0x20 && k.Text[0] < 0x7f:
		b = k.Text[0]
	case csi:
		return false, false
	case k.Code == uv.KeyEscape && k.Mod == 0:
		b = '\x1b' // the first byte of a cut string terminator
	case k.Code == '\\' && k.Mod == uv.ModAlt:
		j.buf = append(j.buf, '\x1b', '\\')
		return true, true
	case k.Code == 'g' && k.Mod == uv.ModCtrl:
		j.buf = append(j.buf, '\a')
		return true, true
	default:
		return false, false
	}
	if csi {
		// Parameters and intermediates 0x20-0x3f, then a final byte.
		if b >= 0x40 && b <= 0x7e {
			j.buf = append(j.buf, b)
			return true, true
		}
		j.buf = append(j.buf, b)
		return false, true
	}
	if b == '\\' && j.buf[len(j.buf)-1] == '\x1b' {
		j.buf = append(j.buf, b)
		return true, true
	}
	j.buf = append(j.buf, b)
	return false, true
}

// decode is the whole reply as the reader would have given it uncut.
func (j *replyJoiner) decode() []uv.Event {
	b := j.buf
	j.buf = nil
	var d uv.EventDecoder
	var out []uv.Event
	for len(b) > 0 {
		n, ev := d.Decode(b)
		if n <= 0 {
			break
		}
		if _, key := ev.(uv.KeyPressEvent); !key && ev != nil {
			out = append(out, ev)
		}
		b = b[n:]
	}
	return out
}

// cut tells whether s, an event the reader could not decode, is the start
// of a reply that ends later: an introducer without its end. Only the
// replies the monitor can get are joined: OSC (the colour it asks for) and
// CSI (mouse reports); it asks for no DCS.
func cut(s string) bool {
	if len(s) < 2 || s[0] != '\x1b' {
		return false
	}
	last := s[len(s)-1]
	switch s[1] {
	case '[':
		return len(s) == 2 || last < 0x40 || last > 0x7e
	case ']':
		return last != '\a' && !(len(s) > 3 && s[len(s)-2:] == "\x1b\\")
	}
	return false
}
