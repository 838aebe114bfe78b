package tui

import "github.com/ctxtop/ctxtop/internal/model"

const (
	// historyLen bounds each thread's ring: wider than any sparkline.
	historyLen = 240
	// forgetAfter drops a thread's history when it has not switched for
	// this many samples; most such threads have exited.
	forgetAfter = 120
)

type threadRing struct {
	vol, invol []float64
	last       model.ThreadRates
	seen       int
	active     bool
}

// threadHistory is the per-TID history behind the detail view's sparklines.
type threadHistory struct {
	byTID map[int]*threadRing
}

func newThreadHistory() threadHistory { return threadHistory{byTID: map[int]*threadRing{}} }

func push(h []float64, v float64) []float64 {
	if len(h) == historyLen {
		copy(h, h[1:])
		h = h[:historyLen-1]
	}
	return append(h, v)
}

// add records sample n. Threads absent from s did not switch: they get a
// zero, and are forgotten after forgetAfter samples unless keep is theirs.
func (h threadHistory) add(n int, s *model.Snapshot, keep int) {
	for _, t := range s.Threads {
		r := h.byTID[t.TID]
		if r == nil {
			r = &threadRing{}
			h.byTID[t.TID] = r
		}
		r.vol = push(r.vol, t.VoluntaryPerSec)
		r.invol = push(r.invol, t.InvoluntaryPerSec)
		r.last, r.seen, r.active = t, n, true
	}
	for tid, r := range h.byTID {
		if r.seen == n {
			continue
		}
		if n-r.seen > forgetAfter && tid != keep {
			delete(h.byTID, tid)
			continue
		}
		r.active = false
		r.vol = push(r.vol, 0)
		r.invol = push(r.invol, 0)
	}
}

// rates is the thread's latest figures and whether it switched last interval.
func (h threadHistory) rates(tid int) (model.ThreadRates, bool) {
	r := h.byTID[tid]
	if r == nil {
		return model.ThreadRates{TID: tid}, false
	}
	return r.last, r.active
}

func (h threadHistory) series(tid int) (vol, invol []float64) {
	if r := h.byTID[tid]; r != nil {
		return r.vol, r.invol
	}
	return nil, nil
}

func (h threadHistory) len() int { return len(h.byTID) }
