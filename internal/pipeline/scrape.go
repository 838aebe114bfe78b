package pipeline

import (
	"errors"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sampler"
)

// ErrTargetsGone means every process given with the sampler's PIDs has
// exited (sampler.ErrTargetsGone, said where sinks that import no source
// look for it).
var ErrTargetsGone = sampler.ErrTargetsGone

// ScrapeConfig is what a scrape-driven source samples, and the nominal
// interval its Snapshots are judged over.
type ScrapeConfig struct {
	Sampler sampler.Config
	// Interval is the nominal refresh interval: a pass sooner than
	// MinInterval after the last judged one derives no Snapshot (0: any
	// interval counts).
	Interval time.Duration
}

// Scrapes is the source of a sink that samples when asked (ctxtop serve):
// each Next is a pass now, never a wait, and its raw Sample; it is also
// the end of an interval, derived into a Snapshot by the very interval
// every other output's Snapshots come from, once the pass is at least
// MinInterval after the last one so derived. A pass sooner than that
// leaves the last Snapshot's verdicts standing and keeps its base, as the
// player drops a sample too close to the one before.
//
// Unlike Live it makes no wait looks and reads no tracer between passes: a
// scrape-driven sink sleeps between scrapes and shows no wait reasons.
type Scrapes struct {
	s *sampler.Sampler
	// sample is the pass (the sampler's; tests give samples of their own).
	sample func(*model.Sample) error
	core   *core
	// base is the last pass derived (or the first), which the next
	// Snapshot's rates are over; cur is the pass under way.
	base, cur *model.Sample
	bufs      [2]model.Sample
	based     bool
	snap      model.Snapshot
	// A scrape sooner than MinInterval is not derived, so the next
	// Snapshot is over several passes, while a pass's hint (SameTasksAs,
	// Moved) names only the pass before it. chained says every pass since
	// base held the one before's tasks, and moved is then the union of
	// their Moved: what changed since base, which the derive is given as
	// the hint over base, so that it visits only those tasks there too.
	// lastSeq is the last pass's Seq; spare is merge room.
	chained      bool
	lastSeq      uint64
	moved, spare []int32
}

// NewScrapes opens the sampler. It makes no pass: the first Next does.
func NewScrapes(cfg ScrapeConfig) (*Scrapes, error) {
	s, err := sampler.New(cfg.Sampler)
	if err != nil {
		return nil, err
	}
	sc := newScrapes(s.Sample, liveOptions(cfg.Sampler), cfg.Interval)
	sc.s = s
	return sc, nil
}

func newScrapes(sample func(*model.Sample) error, opts model.Options, nominal time.Duration) *Scrapes {
	sc := &Scrapes{sample: sample, core: newCore(opts, nominal)}
	sc.base, sc.cur = &sc.bufs[0], &sc.bufs[1]
	return sc
}

// liveOptions are the model's options for samples taken with cfg, the
// same for every live source.
func liveOptions(cfg sampler.Config) model.Options {
	return model.Options{HotThreshold: cfg.HotThreshold, Partial: len(cfg.PIDs) > 0}
}

// Next makes a pass now and returns its raw Sample, and the Snapshot it
// ends, or nil when it ends none (the first pass, or one sooner than
// MinInterval after the last derived). Both are valid until the next
// call. When every target has exited, the error is ErrTargetsGone and the
// Sample holds the host-wide counters and no task.
func (s *Scrapes) Next() (*model.Sample, *model.Snapshot, error) {
	cur := s.cur
	err := s.sample(cur)
	if errors.Is(err, ErrTargetsGone) {
		cur.Tasks = cur.Tasks[:0]
		return cur, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	if !s.based {
		s.based = true
		s.rebase(cur)
		return cur, nil, nil
	}
	if s.chained && cur.SameTasksAs != 0 && cur.SameTasksAs == s.lastSeq {
		s.moved, s.spare = unionSorted(s.spare[:0], s.moved, cur.Moved), s.moved
	} else {
		s.chained = false
	}
	s.lastSeq = cur.Seq
	if s.core.tooShort(s.base, cur) {
		return cur, nil, nil
	}
	if s.chained {
		cur.SameTasksAs, cur.Moved = s.base.Seq, append(cur.Moved[:0], s.moved...)
	}
	s.core.deriveInto(&s.snap, s.base, cur)
	s.core.judge(&s.snap)
	s.rebase(cur)
	return cur, &s.snap, nil
}

// rebase makes cur the base of the next Snapshot.
func (s *Scrapes) rebase(cur *model.Sample) {
	s.base, s.cur = cur, s.base
	s.chained, s.lastSeq, s.moved = cur.Seq != 0, cur.Seq, s.moved[:0]
}

// unionSorted appends to dst the ascending union of a and b, both
// ascending without repeats.
func unionSorted(dst, a, b []int32) []int32 {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			dst, a = append(dst, a[0]), a[1:]
		case b[0] < a[0]:
			dst, b = append(dst, b[0]), b[1:]
		default:
			dst, a, b = append(dst, a[0]), a[1:], b[1:]
		}
	}
	return append(append(dst, a...), b...)
}

// Skipped lists the sampler's PIDs already gone at NewScrapes, which are
// not sampled.
func (s *Scrapes) Skipped() []int { return s.s.Skipped() }

// Close releases the sampler's files.
func (s *Scrapes) Close() error { return s.s.Close() }
