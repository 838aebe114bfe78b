// Package timectl is the replay's time control: where in the recording the
// monitor stands, whether it plays and how fast, and the position bar that
// shows it. It moves a position; the root seeks the recording there.
package timectl

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
)

// Point is one recorded sample as the timeline sees it.
type Point struct {
	Time time.Time
	// Rate is false for samples with no interval before them (the first,
	// and the first after damage): the position never rests there.
	Rate  bool
	Spike bool
}

// KeyMap holds the time keys. The arrows ↑/↓ stay with the table.
type KeyMap struct {
	PlayPause, Back, Forward         key.Binding
	PrevSpike, NextSpike             key.Binding
	MinuteBack, MinuteForward, Speed key.Binding
	Slower, Faster                   key.Binding
	// Report writes the HTML report of the window the bar shows; the
	// root does it, the time control only claims the key.
	Report key.Binding
}

// Keys are the default bindings.
func Keys() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return KeyMap{
		PlayPause:     b([]string{"space"}, "space", "play/pause"),
		Back:          b([]string{"left"}, "←", "one sample back"),
		Forward:       b([]string{"right"}, "→", "one sample forward"),
		PrevSpike:     b([]string{"["}, "[", "previous spike"),
		NextSpike:     b([]string{"]"}, "]", "next spike"),
		MinuteBack:    b([]string{"{"}, "{", "a minute back"),
		MinuteForward: b([]string{"}"}, "}", "a minute forward"),
		Speed:         b([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, "1-9", "playback speed"),
		Slower:        b([]string{"-"}, "-", "slower"),
		Faster:        b([]string{"+", "="}, "+", "faster"),
		Report:        b([]string{"R"}, "R", "write HTML report"),
	}
}

// HelpList is every binding once, for the help screen.
func (k KeyMap) HelpList() []key.Binding {
	return []key.Binding{k.PlayPause, k.Back, k.Forward, k.PrevSpike, k.NextSpike, k.MinuteBack, k.MinuteForward, k.Speed, k.Faster, k.Slower, k.Report}
}

// Model is the time control.
type Model struct {
	th       theme.Theme
	keys     KeyMap
	points   []Point
	interval time.Duration
	pos      int
	playing  bool
	speed    int
	width    int
	// msg is a one-shot note ("no later spike"), cleared by the next key.
	msg string
}

// New stands at the first sample with a rate, playing at speed 1.
func New(th theme.Theme, points []Point, interval time.Duration) Model {
	if interval <= 0 {
		interval = time.Second
	}
	m := Model{th: th, keys: Keys(), points: points, interval: interval, speed: 1, playing: true, pos: -1}
	m.pos = m.rateAtOrAfter(0, +1)
	return m
}

// SetSize sets the bar's width; it is one line high.
func (m *Model) SetSize(w, _ int) { m.width = w }

// SetTheme swaps the styles.
func (m *Model) SetTheme(th theme.Theme) { m.th = th }

// Pos is the index of the sample shown.
func (m Model) Pos() int { return m.pos }

// SetNote shows s after the bar until the next time key.
func (m *Model) SetNote(s string) { m.msg = s }

// Points is the timeline; the caller must not modify it.
func (m Model) Points() []Point { return m.points }

// IsReport says whether k asks for the report of the window.
func (m Model) IsReport(k tea.KeyPressMsg) bool { return key.Matches(k, m.keys.Report) }

// Playing says whether time moves on by itself.
func (m Model) Playing() bool { return m.playing }

// Speed is the playback speed, 1 = as recorded.
func (m Model) Speed() int { return m.speed }

// Period is the time between samples while playing.
func (m Model) Period() time.Duration {
	return max(m.interval/time.Duration(m.speed), 10*time.Millisecond)
}

// SetPlaying starts or stops playback.
func (m *Model) SetPlaying(p bool) { m.playing = p }

// Handles says whether k is a time key, which then is not passed on.
func (m Model) Handles(k tea.KeyPressMsg) bool {
	for _, b := range m.keys.HelpList() {
		if key.Matches(k, b) {
			return true
		}
	}
	return false
}

// Update moves the position, play state or speed on a time key. The root
// compares Pos and Playing before and after.
func (m Model) Update(msg tea.Msg) (Model, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return m, nil
	}
	m.msg = ""
	km := m.keys
	switch {
	case key.Matches(k, km.PlayPause):
		m.playing = !m.playing
		if m.playing && m.atEnd() {
			// Play at the end starts over, as a video player does.
			m.pos = m.rateAtOrAfter(0, +1)
		}
	case key.Matches(k, km.Back):
		m.playing = false
		m.pos = m.rateAtOrAfter(m.pos-1, -1)
	case key.Matches(k, km.Forward):
		m.playing = false
		m.pos = m.rateAtOrAfter(m.pos+1, +1)
	case key.Matches(k, km.PrevSpike):
		m.jumpSpike(-1)
	case key.Matches(k, km.NextSpike):
		m.jumpSpike(+1)
	case key.Matches(k, km.MinuteBack):
		m.jumpTime(-time.Minute)
	case key.Matches(k, km.MinuteForward):
		m.jumpTime(time.Minute)
	case key.Matches(k, km.Speed):
		m.speed = int(k.String()[0] - '0')
	case key.Matches(k, km.Slower):
		m.speed = max(m.speed-1, 1)
	case key.Matches(k, km.Faster):
		m.speed = min(m.speed+1, 9)
	}
	return m, nil
}

// Advance moves one sample on while playing; at the end it stops and
// reports false.
func (m *Model) Advance() bool {
	next := m.rateAtOrAfter(m.pos+1, +1)
	if next == m.pos {
		m.playing = false
		return false
	}
	m.pos = next
	return true
}

func (m Model) atEnd() bool { return m.rateAtOrAfter(m.pos+1, +1) == m.pos }

// rateAtOrAfter is the first sample with a rate from i in direction dir,
// clamped to the recording; the current position when there is none.
func (m Model) rateAtOrAfter(i, dir int) int {
	for ; i >= 0 && i < len(m.points); i += dir {
		if m.points[i].Rate {
			return i
		}
	}
	if m.pos >= 0 {
		return m.pos
	}
	return 0
}

// jumpSpike moves to the start of the previous or next spike: the first
// spike sample of a run (model.SpikeRuns), so ] on a storm lands where it
// began and [ inside one goes back to where it began.
func (m *Model) jumpSpike(dir int) {
	runs := model.SpikeRuns(len(m.points), func(i int) bool { return m.points[i].Spike && m.points[i].Rate })
	if dir > 0 {
		if i := slices.IndexFunc(runs, func(r model.SpikeRun) bool { return r.First > m.pos }); i >= 0 {
			m.pos, m.playing = runs[i].First, false
			return
		}
		m.msg = "no later spike"
		return
	}
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].First < m.pos {
			m.pos, m.playing = runs[i].First, false
			return
		}
	}
	m.msg = "no earlier spike"
}

func (m *Model) jumpTime(d time.Duration) {
	if len(m.points) == 0 || m.pos < 0 {
		return
	}
	target := m.points[m.pos].Time.Add(d)
	var i int
	dir := +1
	if d < 0 {
		// The last sample at or before the target.
		i = sort.Search(len(m.points), func(i int) bool { return m.points[i].Time.After(target) }) - 1
		dir = -1
	} else {
		// The first sample at or after it.
		i = sort.Search(len(m.points), func(i int) bool { return !m.points[i].Time.Before(target) })
	}
	i = max(min(i, len(m.points)-1), 0)
	j := m.rateAtOrAfter(i, dir)
	if !m.points[j].Rate || (j == m.pos && i != m.pos) {
		// Nothing that way: go to the first or last sample with a rate.
		if dir > 0 {
			j = m.rateAtOrAfter(len(m.points)-1, -1)
		} else {
			j = m.rateAtOrAfter(0, +1)
		}
	}
	m.pos = j
}

// View is the position bar: play state, speed, the time, a bar with the
// spikes marked, the end time and the sample number.
func (m Model) View() string {
	if m.width <= 0 || len(m.points) == 0 || m.pos < 0 {
		return ""
	}
	t := m.th
	state := "▶"
	if !m.playing {
		state = "⏸"
	}
	head := fmt.Sprintf("%s %d× %s ", state, m.speed, m.points[m.pos].Time.Format("15:04:05"))
	tail := fmt.Sprintf(" %s %d/%d", m.points[len(m.points)-1].Time.Format("15:04:05"), m.pos+1, len(m.points))
	if m.msg != "" {
		tail += "  " + m.msg
	}
	hints := "  space ←/→ [/] spike {/} min 1-9"
	room := m.width - textutil.Width(head) - textutil.Width(tail)
	if room-textutil.Width(hints) >= 20 {
		room -= textutil.Width(hints)
	} else {
		hints = ""
	}
	if room < 5 {
		// Narrow: the time and the position matter most.
		return textutil.Truncate(t.Title.Render(head)+fmt.Sprintf("%d/%d", m.pos+1, len(m.points)), m.width)
	}
	return textutil.Truncate(t.Title.Render(head)+m.bar(room)+t.Dim.Render(tail)+t.Dim.Render(hints), m.width)
}

// bar draws room cells: played part, the cursor, and a spike mark in each
// cell that holds one.
func (m Model) bar(room int) string {
	t := m.th
	n := len(m.points)
	cur := 0
	if n > 1 {
		cur = m.pos * (room - 1) / (n - 1)
	}
	// Cells of one kind are drawn as one styled run.
	type kind int
	const (
		played kind = iota
		ahead
		spike
		cursor
	)
	styles := [...]func(...string) string{t.Spark.Render, t.Dim.Render, t.Spike.Render, t.Value.Render}
	glyphs := [...]string{"━", "─", "▲", "●"}
	var b strings.Builder
	run, runKind := 0, played
	flush := func() {
		if run > 0 {
			b.WriteString(styles[runKind](strings.Repeat(glyphs[runKind], run)))
		}
		run = 0
	}
	for c := range room {
		lo, hi := c*n/room, (c+1)*n/room
		k := ahead
		if c < cur {
			k = played
		}
		for i := lo; i < max(hi, lo+1) && i < n; i++ {
			if m.points[i].Spike {
				k = spike
				break
			}
		}
		if c == cur {
			k = cursor
		}
		if k != runKind {
			flush()
			runKind = k
		}
		run++
	}
	flush()
	return b.String()
}
