package tui

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/tui/timectl"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// played is a recording played once through pipeline.Player and held in
// memory: a Replay that serves the Player's snapshots without the Player.
// (The composition root's adapter over a live Player is tested with it.)
type played struct {
	snaps    []model.Snapshot
	points   []timectl.Point
	rates    [][2]float64
	facts    hostinfo.Facts
	interval time.Duration
	note     string
	// wakeups and stacks: what the recording holds.
	wakeups, stacks bool
}

// playAll plays every sample of p.
func playAll(t *testing.T, p *pipeline.Player, facts hostinfo.Facts, note string) *played {
	t.Helper()
	r := &played{facts: facts, interval: p.Recording().Header.Interval, note: note, wakeups: p.HasWakeups(), stacks: p.HasStacks()}
	for i, mk := range p.Marks() {
		s, err := p.Seek(i)
		if err != nil {
			t.Fatal(err)
		}
		r.snaps = append(r.snaps, s)
		r.points = append(r.points, timectl.Point{Time: mk.Time, Rate: mk.Rate, Spike: mk.Spike.Active})
		r.rates = append(r.rates, [2]float64{mk.CSPerSec, mk.InPerSec})
	}
	return r
}

func (r *played) Points() []timectl.Point            { return r.points }
func (r *played) Rates(i int) (cs, in float64)       { return r.rates[i][0], r.rates[i][1] }
func (r *played) Seek(i int) (model.Snapshot, error) { return r.snaps[i], nil }
func (r *played) Facts() hostinfo.Facts              { return r.facts }
func (r *played) Interval() time.Duration            { return r.interval }
func (r *played) Note() string                       { return r.note }
func (r *played) Recorded() (wakeups, stacks bool)   { return r.wakeups, r.stacks }

// replayRoot opens a made-up recording of 180 s with a storm from 10:01:40
// to 10:01:45 in a root model of w×h, paused on its first sample.
func replayRoot(t *testing.T, w, h int) (Model, *pipeline.Player) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "storm.ctxrec")
	if err := tuitest.ReplayFile(path, 180, 100, 106); err != nil {
		t.Fatal(err)
	}
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Replay: playAll(t, p, hostinfo.Facts{Hostname: "replay-host", Kernel: "6.1.0-test"}, ""), Interval: time.Second, HotThreshold: 1000, NoColor: true, Version: "test", FixedBackground: true}, "this-host", "")
	m = m.handleResize(w, h)
	m.replay.ctl.SetPlaying(false)
	m = replayStep(t, m, m.seek(m.replay.ctl.Pos())())
	return m, p
}

// replayStep feeds msg and then the seeks it starts, not the ticks.
func replayStep(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	next, cmd := m.Update(msg)
	m = next.(Model)
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch r := runWithin(c, 50*time.Millisecond).(type) {
		case tea.BatchMsg:
			queue = append(queue, r...)
		case seekedMsg:
			next, cmd := m.Update(r)
			m = next.(Model)
			queue = append(queue, cmd)
		}
	}
	return m
}

func TestReplayScreenAtTheSpike(t *testing.T) {
	m, _ := replayRoot(t, 80, 24)
	m = replayStep(t, m, press("]"))
	got := tuitest.Render(t, m.Render(), colorprofile.Ascii)
	tuitest.CheckFits(t, got, 80, 24)
	for _, want := range []string{"replay-host", "10:01:40", "SPIKE", "PAUSED", "100/180"} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	tuitest.Golden(t, "80x24", got)
}

func TestReplayStepsAndJumpsShowWhatPlayingShows(t *testing.T) {
	m, p := replayRoot(t, 80, 24)
	for _, tc := range []struct {
		key string
		pos int
	}{{"right", 2}, {"right", 3}, {"}", 63}, {"left", 62}, {"]", 99}, {"{", 39}, {"]", 99}} {
		m = replayStep(t, m, press(tc.key))
		// Each sample is 1 s and up to 3 ms after the last, so a minute
		// from 3 is 63 or, after drift, one short.
		if got := m.replay.ctl.Pos(); got != tc.pos && got != tc.pos-1 {
			t.Errorf("after %q at %d, want %d", tc.key, got, tc.pos)
		}
		want, err := p.Seek(m.replay.ctl.Pos())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, *m.snap); diff != "" {
			t.Errorf("after %q the screen shows (-want +got):\n%s", tc.key, diff)
		}
		// The header's history is what playing up to here would have
		// drawn: one rate per sample but the first.
		if diff := cmp.Diff(m.replay.ctl.Pos(), len(m.header.History())); diff != "" {
			t.Errorf("history after %q (-want +got):\n%s", tc.key, diff)
		}
	}
}

func TestReplayKeepsTableKeys(t *testing.T) {
	m, _ := replayRoot(t, 80, 24)
	before, pos := selected(m), m.replay.ctl.Pos()
	m = replayStep(t, m, press("down"))
	if reflect.DeepEqual(selected(m), before) {
		t.Errorf("down did not move the selection from %+v", before)
	}
	if diff := cmp.Diff(pos, m.replay.ctl.Pos()); diff != "" {
		t.Errorf("down moved the time (-want +got):\n%s", diff)
	}
	m = replayStep(t, m, press("H"))
	if !m.table.Processes() {
		t.Errorf("H did not switch to processes in a replay")
	}
}

func TestReplayShowsItsNote(t *testing.T) {
	_, p := replayRoot(t, 120, 24)
	m2 := New(Options{Replay: playAll(t, p, hostinfo.Facts{}, "recorded with 64 CPUs, this host has 2"), Interval: time.Second, NoColor: true, FixedBackground: true}, "", "")
	m2 = m2.handleResize(120, 24)
	if got := m2.Render(); !strings.Contains(got, "recorded with 64 CPUs, this host has 2") {
		t.Errorf("the note is not on screen:\n%s", got)
	}
}

func TestReplayHelpListsTheTimeKeys(t *testing.T) {
	m, _ := replayRoot(t, 80, 24)
	m = replayStep(t, m, press("?"))
	got := tuitest.Render(t, m.Render(), colorprofile.Ascii)
	tuitest.CheckFits(t, got, 80, 24)
	tuitest.Golden(t, "80x24", got)
	for _, want := range []string{"replay", "play/pause", "next spike", "a minute back", "playback speed"} {
		if !strings.Contains(got, want) {
			t.Errorf("help lacks %q:\n%s", want, got)
		}
	}
}
