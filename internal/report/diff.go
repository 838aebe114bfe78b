package report

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/ctxtop/ctxtop/internal/record"
)

// minIntervals is the fewest intervals a side needs for its spread to
// mean anything; below it a comparison says so instead of judging.
const minIntervals = 4

// Spread is a figure over a window's intervals: the median and the middle
// half (the quartiles). The middle half, not the range, because a window
// of one-second intervals always holds a few odd ones (a start, a stall):
// over the range every comparison would overlap, over the quartiles only
// the ones whose usual intervals do.
type Spread struct {
	Median float64 `json:"median"`
	Low    float64 `json:"p25"`
	High   float64 `json:"p75"`
	N      int     `json:"intervals"`
}

// spreadOf is the spread of v's numbers (NaN are intervals where the
// figure does not apply).
func spreadOf(v []float64) Spread {
	x := make([]float64, 0, len(v))
	for _, f := range v {
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			x = append(x, f)
		}
	}
	if len(x) == 0 {
		return Spread{Median: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	slices.Sort(x)
	q := func(p float64) float64 {
		// Linear between the closest ranks (type 7, R's and NumPy's default).
		h := p * float64(len(x)-1)
		lo := int(math.Floor(h))
		hi := min(lo+1, len(x)-1)
		return x[lo] + (h-float64(lo))*(x[hi]-x[lo])
	}
	return Spread{Median: q(0.5), Low: q(0.25), High: q(0.75), N: len(x)}
}

// apart says the middle halves do not overlap.
func apart(a, b Spread) bool {
	return a.N > 0 && b.N > 0 && (a.High < b.Low || b.High < a.Low)
}

// Verdicts.
const (
	VerdictNoDifference = "no clear difference"
	VerdictHigher       = "higher"
	VerdictLower        = "lower"
	VerdictTooFew       = "too few intervals to judge"
	VerdictUnknown      = "not measured"
)

// Metric is one figure of one group on both sides.
type Metric struct {
	Name string `json:"name"`
	A    Spread `json:"a"`
	B    Spread `json:"b"`
	// Ratio is B's median over A's.
	Ratio float64 `json:"ratio"`
	// Verdict is VerdictHigher or VerdictLower (B against A) only when
	// the middle halves do not overlap.
	Verdict string `json:"verdict"`
}

// DiffRow is one group or cgroup compared.
type DiffRow struct {
	Kind string `json:"kind"` // "host", "group" or "cgroup"
	Name string `json:"name"`
	// Only is "A" or "B" for a group seen on one side only, "" for both.
	Only    string   `json:"only,omitempty"`
	Metrics []Metric `json:"metrics"`
}

// Side is one recording's window.
type Side struct {
	File      string    `json:"file"`
	Host      string    `json:"host"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Intervals int       `json:"intervals"`
	Wakeups   bool      `json:"has_wakeups"`
}

// Diff compares two windows.
type Diff struct {
	A    Side      `json:"a"`
	B    Side      `json:"b"`
	Rows []DiffRow `json:"rows"`
	// Omitted counts the quieter groups and cgroups left out.
	Omitted int            `json:"omitted"`
	loc     *time.Location // A's zone, for clock times
}

// Location is A's recorder's time zone.
func (d *Diff) Location() *time.Location {
	if d.loc == nil {
		return time.UTC
	}
	return d.loc
}

// metric names, in the order rows list them.
const (
	mVol      = "cs/s voluntary"
	mInv      = "cs/s involuntary"
	mPerCPU   = "switches per CPU-second"
	mCPU      = "%CPU"
	mWait     = "WAIT%"
	mLatency  = "wake-to-run p50 µs"
	mCross    = "cross-CPU %"
	mThrottle = "throttled %"
)

// Compare compares the windows passes a and b (ForDiff) were given, of
// recordings ra and rb, per thread group (by process name and the g rule's
// pattern, since PIDs differ between runs) and per cgroup. top bounds the
// groups and cgroups listed, busiest first.
func Compare(a, b *Pass, ra, rb *record.Recording, fileA, fileB string, top int) (*Diff, error) {
	sa, err := a.scan()
	if err != nil {
		return nil, err
	}
	sb, err := b.scan()
	if err != nil {
		return nil, err
	}
	d := &Diff{A: side(sa, ra, fileA), B: side(sb, rb, fileB), loc: ra.Location()}
	wake := sa.hasWakeups && sb.hasWakeups

	host := DiffRow{Kind: "host", Name: "host"}
	for _, m := range []struct {
		name string
		v    func(*interval) float64
	}{
		{"cs/s", func(i *interval) float64 { return i.cs }},
		{"interrupts/s", func(i *interval) float64 { return i.in }},
		{"rescheduling IPIs/s", func(i *interval) float64 { return i.ipi }},
		{"run queue", func(i *interval) float64 { return i.runq }},
	} {
		host.Metrics = append(host.Metrics, metric(m.name, hostSeries(sa, m.v), hostSeries(sb, m.v)))
	}
	d.Rows = append(d.Rows, host)
	groupRows, omitted := compareEntities(sa, sb, sa.groups, sb.groups, "group", wake, top)
	cgroupRows, omittedC := compareEntities(sa, sb, byPath(sa.cgroups), byPath(sb.cgroups), "cgroup", false, top)
	d.Rows = append(d.Rows, groupRows...)
	d.Rows = append(d.Rows, cgroupRows...)
	d.Omitted = omitted + omittedC
	return d, nil
}

func side(s *scan, rec *record.Recording, file string) Side {
	first := s.intervals[0]
	return Side{File: filepath.Base(file), Host: rec.Header.Facts.Hostname,
		From: first.time.Add(-time.Duration(first.secs * float64(time.Second))), To: s.intervals[len(s.intervals)-1].time,
		Intervals: len(s.intervals), Wakeups: s.hasWakeups}
}

func byPath(m map[string]*entity) map[groupKey]*entity {
	out := make(map[groupKey]*entity, len(m))
	for _, e := range m {
		out[e.key] = e
	}
	return out
}

func hostSeries(s *scan, v func(*interval) float64) []float64 {
	out := make([]float64, len(s.intervals))
	for i := range s.intervals {
		out[i] = v(&s.intervals[i])
	}
	return out
}

// dense is e's figure in every interval of s: 0 where it did not appear
// (it neither switched nor ran), NaN where the figure does not apply.
func dense(s *scan, e *entity, v func(*point) float64, absent float64) []float64 {
	out := make([]float64, len(s.intervals))
	for i := range out {
		out[i] = absent
	}
	if e == nil {
		return out
	}
	for i := range e.series {
		out[e.series[i].idx] = v(&e.series[i])
	}
	return out
}

func metric(name string, a, b []float64) Metric {
	m := Metric{Name: name, A: spreadOf(a), B: spreadOf(b)}
	m.Ratio = m.B.Median / m.A.Median
	switch {
	case m.A.N == 0 || m.B.N == 0:
		m.Verdict = VerdictUnknown
	case m.A.N < minIntervals || m.B.N < minIntervals:
		m.Verdict = VerdictTooFew
	case !apart(m.A, m.B):
		m.Verdict = VerdictNoDifference
	case m.B.Median > m.A.Median:
		m.Verdict = VerdictHigher
	default:
		m.Verdict = VerdictLower
	}
	return m
}

// compareEntities compares the top busiest entities of either side.
func compareEntities(sa, sb *scan, ga, gb map[groupKey]*entity, kind string, wake bool, top int) ([]DiffRow, int) {
	type cand struct {
		key  groupKey
		name string
		busy float64
	}
	seen := map[groupKey]*cand{}
	for _, side := range []struct {
		s *scan
		m map[groupKey]*entity
	}{{sa, ga}, {sb, gb}} {
		for k, e := range side.m {
			busy := side.s.mean(e, func(p *point) float64 { return p.vol + p.inv })
			// A group that ran without switching still counts as busy.
			busy += side.s.mean(e, func(p *point) float64 { return p.cpu })
			c := seen[k]
			if c == nil {
				c = &cand{key: k, name: e.name}
				seen[k] = c
			}
			c.busy = max(c.busy, busy)
		}
	}
	cands := make([]*cand, 0, len(seen))
	for _, c := range seen {
		cands = append(cands, c)
	}
	sortBy(cands, func(x, y **cand) int {
		return cmp.Or(cmp.Compare((*y).busy, (*x).busy), cmp.Compare((*x).name, (*y).name))
	})
	omitted := max(len(cands)-top, 0)
	cands = cands[:min(len(cands), top)]

	var rows []DiffRow
	for _, c := range cands {
		ea, eb := ga[c.key], gb[c.key]
		r := DiffRow{Kind: kind, Name: c.name}
		switch {
		case ea == nil:
			r.Only = "B"
		case eb == nil:
			r.Only = "A"
		}
		add := func(name string, v func(*point) float64, absent float64) {
			r.Metrics = append(r.Metrics, metric(name, dense(sa, ea, v, absent), dense(sb, eb, v, absent)))
		}
		add(mVol, func(p *point) float64 { return p.vol }, 0)
		add(mInv, func(p *point) float64 { return p.inv }, 0)
		add(mPerCPU, func(p *point) float64 {
			if p.cpu <= 0 {
				return math.NaN()
			}
			return (p.vol + p.inv) / (p.cpu / 100)
		}, math.NaN())
		add(mCPU, func(p *point) float64 { return p.cpu }, 0)
		if kind == "group" {
			add(mWait, func(p *point) float64 { return p.wait }, 0)
		}
		if kind == "cgroup" && (ea != nil && ea.hasThrottle || eb != nil && eb.hasThrottle) {
			add(mThrottle, func(p *point) float64 { return p.throttle }, math.NaN())
		}
		if wake {
			add(mLatency, func(p *point) float64 {
				if p.latW <= 0 {
					return math.NaN()
				}
				return p.lat / p.latW
			}, math.NaN())
			add(mCross, func(p *point) float64 {
				if p.resolved <= 0 {
					return math.NaN()
				}
				return 100 * p.cross / p.resolved
			}, math.NaN())
		}
		rows = append(rows, r)
	}
	return rows, omitted
}
