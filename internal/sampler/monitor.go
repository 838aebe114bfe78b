package sampler

import (
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Monitor pairs a Sampler with the model: each Next samples once and returns
// the rates since the previous call. Batch mode and the TUI both use it, so
// they show the same figures for the same interval.
type Monitor struct {
	s         *Sampler
	prev, cur *model.Sample
	bufs      [2]model.Sample
	opts      model.Options
	spikes    *model.SpikeDetector
	waits     *waitSampler
	// record, when set, gets every raw Sample before rates are computed.
	record func(*model.Sample) error
}

// NewMonitor opens the sampler and takes the first sample, so the first Next
// already has an interval to compute rates over.
func NewMonitor(cfg Config) (*Monitor, error) {
	return NewRecordingMonitor(cfg, nil)
}

// NewRecordingMonitor is NewMonitor that hands every raw Sample, the
// baseline included, to record: batch mode's --record keeps the very
// samples its reports come from.
func NewRecordingMonitor(cfg Config, record func(*model.Sample) error) (*Monitor, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	m := &Monitor{
		s:      s,
		opts:   model.Options{HotThreshold: cfg.HotThreshold, Partial: len(cfg.PIDs) > 0},
		spikes: model.NewSpikeDetector(5 * time.Minute),
		waits:  newWaitSampler(s.rootFD),
		record: record,
	}
	m.prev, m.cur = &m.bufs[0], &m.bufs[1]
	if err := s.Sample(m.prev); err != nil {
		s.Close()
		return nil, err
	}
	if err := m.keep(m.prev); err != nil {
		s.Close()
		return nil, err
	}
	return m, nil
}

// Next samples now and returns the Snapshot over the time since the last
// sample. The Snapshot owns its slices: callers may keep it.
func (m *Monitor) Next() (model.Snapshot, error) {
	err := m.s.Sample(m.cur)
	// The looks belong to the interval that ends now, so they go into the
	// sample that closes it, and a recording replays them.
	m.cur.Waits = m.waits.collect(m.cur.Waits[:0])
	if err != nil {
		return model.Snapshot{}, err
	}
	snap := model.Compute(m.prev, m.cur, m.opts)
	// A thread that just became hot was not looked at during the interval:
	// one look now, so even a single report (-n 1) says what it waits on.
	if n := len(m.cur.Waits); m.waits.lookNow(&snap, m.cur) {
		model.AttachWaits(&snap, m.cur.Waits[n:])
		m.cur.Waits = sortWaits(m.cur.Waits)
	}
	// Kept after that look, so a replay attaches the same tallies.
	if err := m.keep(m.cur); err != nil {
		return model.Snapshot{}, err
	}
	snap.Spike = m.spikes.Observe(snap.Time, snap.System.ContextSwitchesPerSec, snap.System.CPUs)
	m.waits.arm(&snap)
	m.prev, m.cur = m.cur, m.prev
	return snap, nil
}

// Close stops the wait-reason looks and releases the sampler's files.
func (m *Monitor) Close() error {
	m.waits.close()
	return m.s.Close()
}

func (m *Monitor) keep(s *model.Sample) error {
	if m.record == nil {
		return nil
	}
	return m.record(s)
}
