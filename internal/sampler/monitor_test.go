package sampler

import (
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/waitreason"
)

// testMonitor takes a sample, the looks of the interval and the rates in
// the order pipeline.Intervals does for the live source, for the sampler's
// own tests of its counters and looks. They are internal tests (they reach
// the looker's state), and the pipeline imports this package, so they
// cannot use it: this copy of the order (read, derive, late looks, derive
// again, arm) must follow pipeline.Intervals.Next.
type testMonitor struct {
	s         *Sampler
	waits     *looker
	opts      model.Options
	prev, cur *model.Sample
}

func NewMonitor(cfg Config) (*testMonitor, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	m := &testMonitor{s: s, waits: newLooker(s.rootFD), prev: new(model.Sample), cur: new(model.Sample),
		opts: model.Options{HotThreshold: cfg.HotThreshold, Partial: len(cfg.PIDs) > 0, ShortReason: waitreason.Short}}
	if err := s.Sample(m.prev); err != nil {
		s.Close()
		return nil, err
	}
	return m, nil
}

func (m *testMonitor) Next() (model.Snapshot, error) {
	err := m.s.Sample(m.cur)
	m.cur.Waits = m.waits.collect(m.cur.Waits[:0])
	if err != nil {
		return model.Snapshot{}, err
	}
	snap := model.Compute(m.prev, m.cur, m.opts)
	if m.waits.lookNow(&snap, m.cur) {
		m.cur.Waits = sortWaits(m.cur.Waits)
		snap = model.Compute(m.prev, m.cur, m.opts)
	}
	m.waits.arm(&snap)
	m.prev, m.cur = m.cur, m.prev
	return snap, nil
}

func (m *testMonitor) Close() error {
	m.waits.close()
	return m.s.Close()
}
