package tuiadapt

import (
	"errors"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/tui"
	"github.com/ctxtop/ctxtop/internal/tui/timectl"
)

// PlayerReplay shows a recording's Player to the monitor, within the
// Player's range.
// report, when not nil, writes the HTML report of the Player's range
// (the R key).
func PlayerReplay(p *pipeline.Player, facts hostinfo.Facts, note string, report func() (string, error)) tui.Replay {
	return playerReplay{p, facts, note, report}
}

type playerReplay struct {
	p      *pipeline.Player
	facts  hostinfo.Facts
	note   string
	report func() (string, error)
}

func (s playerReplay) Report() (string, error) {
	if s.report == nil {
		return "", errors.New("not available")
	}
	return s.report()
}

func (s playerReplay) Note() string { return s.note }

func (s playerReplay) Recorded() (wakeups, stacks bool) { return s.p.HasWakeups(), s.p.HasStacks() }

func (s playerReplay) Points() []timectl.Point {
	marks := s.p.Marks()
	lo, hi := s.p.Range()
	pts := make([]timectl.Point, 0, hi-lo+1)
	for _, m := range marks[lo : hi+1] {
		pts = append(pts, timectl.Point{Time: m.Time, Rate: m.Rate, Spike: m.Spike.Active})
	}
	return pts
}

func (s playerReplay) Rates(i int) (cs, in float64) {
	lo, _ := s.p.Range()
	m := s.p.Marks()[lo+i]
	return m.CSPerSec, m.InPerSec
}

func (s playerReplay) Seek(i int) (model.Snapshot, error) {
	lo, _ := s.p.Range()
	return s.p.Seek(lo + i)
}

func (s playerReplay) Facts() hostinfo.Facts { return s.facts }

func (s playerReplay) Interval() time.Duration { return s.p.Recording().Header.Interval }
