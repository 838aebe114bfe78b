package report

import (
	"cmp"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/record"
)

// Sizes that bound a report whatever the recording: an hour at 10,000
// threads draws and weighs what a minute of ten does.
const (
	// maxPoints is the most points a timeline line has: longer windows
	// are drawn a bucket of intervals per point, each the bucket's
	// highest, so a one-second burst in an hour still shows.
	maxPoints = 720
	// topGroupLines is how many groups get a line of their own.
	topGroupLines = 5
	// topRows is the rows of each table.
	topRows = 15
	// spikeRows is the threads and risers shown per spike.
	spikeRows = 5
	// maxSpikes is the spikes described one by one, largest first.
	maxSpikes = 10
)

// Report is an incident report of one window of a recording.
type Report struct {
	File     string         `json:"file"`
	Facts    hostinfo.Facts `json:"host"`
	Recorder Recorder       `json:"recorder"`
	From     time.Time      `json:"from"`
	To       time.Time      `json:"to"`
	// Intervals is how many intervals with rates the window holds.
	Intervals int      `json:"intervals"`
	Notes     []string `json:"notes,omitempty"`
	// Baseline is the median cs/s over the window's intervals that were
	// not spikes: the host's usual level.
	Baseline   float64     `json:"baseline_cs_per_sec"`
	MeanCS     float64     `json:"mean_cs_per_sec"`
	PeakCS     float64     `json:"peak_cs_per_sec"`
	Timeline   Timeline    `json:"timeline"`
	Spikes     []Spike     `json:"spikes"`
	Threads    []ThreadRow `json:"threads"`
	Groups     []GroupRow  `json:"groups"`
	Cgroups    []CgroupRow `json:"cgroups"`
	Pairs      []PairRow   `json:"wakeup_pairs,omitempty"`
	HasWakeups bool        `json:"has_wakeups"`
	HasStacks  bool        `json:"has_stacks"`
	OffCPU     *flameNode  `json:"off_cpu,omitempty"`
	WokenFrom  *flameNode  `json:"woken_from,omitempty"`
	Generated  time.Time   `json:"generated"`
	Version    string      `json:"ctxtop_version"`
	loc        *time.Location
}

// Recorder is how the recording was made.
type Recorder struct {
	Version  string        `json:"ctxtop_version"`
	Interval time.Duration `json:"interval_ns"`
	ProcRoot string        `json:"proc_root"`
	PIDs     []int         `json:"pids,omitempty"`
	Hot      float64       `json:"hot_threshold"`
	CPUs     int           `json:"cpus"`
	Samples  int           `json:"samples"`
	Lost     int           `json:"lost_samples"`
	Size     int64         `json:"bytes"`
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
}

// Timeline is the window's host-wide series and the top groups' lines,
// at most maxPoints long.
type Timeline struct {
	Times []time.Time `json:"times"`
	// PerPoint is how many intervals each point stands for (the highest
	// of them is drawn); 1 for a short window.
	PerPoint int       `json:"intervals_per_point"`
	CS       []float64 `json:"cs_per_sec"`
	In       []float64 `json:"interrupts_per_sec"`
	IPI      []float64 `json:"resched_ipis_per_sec"`
	RunQ     []float64 `json:"procs_running"`
	// Baseline is the spike rule's baseline at each point, 0 before it
	// has history.
	Baseline []float64 `json:"baseline"`
	Spike    []bool    `json:"spike"`
	Groups   []Line    `json:"groups"`
}

// Line is one group's cs/s over the timeline.
type Line struct {
	Name   string    `json:"name"`
	Values []float64 `json:"cs_per_sec"`
}

// Spike is one run of intervals the spike rule marked.
type Spike struct {
	Start     time.Time     `json:"start"`
	End       time.Time     `json:"end"`
	Duration  time.Duration `json:"duration_ns"`
	Intervals int           `json:"intervals"`
	PeakAt    time.Time     `json:"peak_at"`
	Peak      float64       `json:"peak_cs_per_sec"`
	Baseline  float64       `json:"baseline"`
	Factor    float64       `json:"factor"`
	Reason    string        `json:"reason"`
	// Threads are the busiest threads during the spike.
	Threads []ThreadRow `json:"threads"`
	// Rises are the groups and cgroups whose switches rose most against
	// the intervals before the spike.
	Rises []Rise `json:"rises"`
	// Explained is the share of the host's rise the listed groups hold.
	Explained float64 `json:"explained_share"`
	// firstIdx and lastIdx are the interval indices.
	firstIdx, lastIdx int
}

// Rise is how much a group or cgroup's cs/s rose during a spike.
type Rise struct {
	Kind   string  `json:"kind"` // "group" or "cgroup"
	Name   string  `json:"name"`
	Before float64 `json:"before_cs_per_sec"`
	During float64 `json:"during_cs_per_sec"`
}

// Factor is During over Before; +Inf from nothing.
func (r Rise) Factor() float64 { return r.During / r.Before }

// ThreadRow is one thread's means over a window.
type ThreadRow struct {
	PID         int     `json:"pid"`
	TID         int     `json:"tid"`
	Comm        string  `json:"comm"`
	ProcessComm string  `json:"process"`
	Group       string  `json:"group"`
	Voluntary   float64 `json:"voluntary_per_sec"`
	Involuntary float64 `json:"involuntary_per_sec"`
	CPU         float64 `json:"cpu_percent"`
	Wait        float64 `json:"wait_percent"`
	// HotShare is the share of the window the thread was hot.
	HotShare float64 `json:"hot_share"`
	Why      string  `json:"why,omitempty"`
}

// Total is voluntary plus involuntary switches per second.
func (t ThreadRow) Total() float64 { return t.Voluntary + t.Involuntary }

// GroupRow is one thread group's means over the window.
type GroupRow struct {
	Name        string  `json:"name"`
	Threads     int     `json:"threads"`
	Voluntary   float64 `json:"voluntary_per_sec"`
	Involuntary float64 `json:"involuntary_per_sec"`
	CPU         float64 `json:"cpu_percent"`
	Wait        float64 `json:"wait_percent"`
	Peak        float64 `json:"peak_cs_per_sec"`
	Why         string  `json:"why,omitempty"`
}

// Total is voluntary plus involuntary switches per second.
func (g GroupRow) Total() float64 { return g.Voluntary + g.Involuntary }

// CgroupRow is one cgroup's means over the window.
type CgroupRow struct {
	Name        string  `json:"name"`
	Path        string  `json:"path"`
	Threads     int     `json:"threads"`
	Voluntary   float64 `json:"voluntary_per_sec"`
	Involuntary float64 `json:"involuntary_per_sec"`
	CPU         float64 `json:"cpu_percent"`
	LimitCPUs   float64 `json:"limit_cpus"`
	Throttling  bool    `json:"has_throttling"`
	Throttled   float64 `json:"throttled_percent"`
	ThrottledMs float64 `json:"throttled_ms_per_sec"`
	PeakThrottl float64 `json:"peak_throttled_percent"`
	Why         string  `json:"why,omitempty"`
}

// Total is voluntary plus involuntary switches per second.
func (c CgroupRow) Total() float64 { return c.Voluntary + c.Involuntary }

// PairRow is one waker→wakee pair over the window.
type PairRow struct {
	Waker    string  `json:"waker"`
	WakerPID int     `json:"waker_pid"`
	WakerTID int     `json:"waker_tid"`
	Wakee    string  `json:"wakee"`
	WakeePID int     `json:"wakee_pid"`
	WakeeTID int     `json:"wakee_tid"`
	PerSec   float64 `json:"wakeups_per_sec"`
	// CrossCPU is a percentage, NaN when not known.
	CrossCPU float64 `json:"cross_cpu_percent"`
	// P50 is the wakee's median wake-to-run latency weighted over the
	// window; P99Max the worst interval's 99th percentile. µs; NaN
	// when not known.
	P50    float64 `json:"latency_p50_us"`
	P99Max float64 `json:"latency_p99_worst_us"`
}

// Report is the report of the window ps was given, from recording rec;
// file names the recording in the report.
func (ps *Pass) Report(rec *record.Recording, file, version string) (*Report, error) {
	s, err := ps.scan()
	if err != nil {
		return nil, err
	}
	h := rec.Header
	first, last := rec.Span()
	r := &Report{
		File: filepath.Base(file), Facts: h.Facts, Notes: rec.Notes,
		Recorder: Recorder{Version: h.CtxtopVersion, Interval: h.Interval, ProcRoot: h.ProcRoot, PIDs: h.PIDs, Hot: h.HotThreshold,
			CPUs: h.CPUs, Samples: rec.Samples(), Lost: rec.Lost, Size: rec.Size, Start: first, End: last},
		From:      s.intervals[0].time.Add(-time.Duration(s.intervals[0].secs * float64(time.Second))),
		To:        s.intervals[len(s.intervals)-1].time,
		Intervals: len(s.intervals), HasWakeups: s.hasWakeups, HasStacks: s.hasStacks,
		Generated: time.Now(), Version: version, loc: rec.Location(),
	}
	var quiet []float64
	for _, iv := range s.intervals {
		r.MeanCS += iv.cs * iv.secs
		r.PeakCS = max(r.PeakCS, iv.cs)
		if !iv.spike.Active {
			quiet = append(quiet, iv.cs)
		}
	}
	r.MeanCS /= s.secs
	r.Baseline = medianOf(quiet)

	groups := s.groupRows()
	r.Groups = groups[:min(len(groups), topRows)]
	r.Threads = threadRows(s.threads, s.secs, topRows)
	r.Cgroups = s.cgroupRows()
	r.Pairs = s.pairRows()
	r.Timeline = s.timeline(groups)
	r.Spikes = s.spikeList()
	if s.hasStacks {
		r.OffCPU, r.WokenFrom = s.offCPU.pruned(), s.woken.pruned()
	}
	return r, nil
}

// Location is the recorder's time zone, which the report's clock times
// are in.
func (r *Report) Location() *time.Location {
	if r.loc == nil {
		return time.UTC
	}
	return r.loc
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// groupKeys are the groups, busiest over the window first.
func (s *scan) groupRows() []GroupRow {
	rows := make([]GroupRow, 0, len(s.groups))
	for _, e := range s.groups {
		g := GroupRow{Name: e.name, Threads: e.members,
			Voluntary: s.mean(e, func(p *point) float64 { return p.vol }), Involuntary: s.mean(e, func(p *point) float64 { return p.inv }),
			CPU: s.mean(e, func(p *point) float64 { return p.cpu }), Wait: s.mean(e, func(p *point) float64 { return p.wait }),
			Why: topReason(e.reasons)}
		for _, p := range e.series {
			g.Peak = max(g.Peak, p.vol+p.inv)
		}
		rows = append(rows, g)
	}
	sortBy(rows, func(a, b *GroupRow) int {
		return cmp.Or(cmp.Compare(b.Total(), a.Total()), cmp.Compare(b.CPU, a.CPU), cmp.Compare(a.Name, b.Name))
	})
	return rows
}

// threadRows are the n busiest threads of m over secs seconds.
func threadRows(m map[tidKey]*threadAgg, secs float64, n int) []ThreadRow {
	rows := make([]ThreadRow, 0, len(m))
	for _, a := range m {
		rows = append(rows, ThreadRow{PID: a.pid, TID: a.tid, Comm: a.comm, ProcessComm: a.processComm, Group: a.group,
			Voluntary: a.vol / secs, Involuntary: a.inv / secs, CPU: a.cpu / secs, Wait: a.wai / secs,
			HotShare: a.hotSecs / secs, Why: topReason(a.reasons)})
	}
	sortBy(rows, func(a, b *ThreadRow) int {
		return cmp.Or(cmp.Compare(b.Total(), a.Total()), cmp.Compare(b.CPU, a.CPU), cmp.Compare(a.PID, b.PID), cmp.Compare(a.TID, b.TID))
	})
	return rows[:min(len(rows), n)]
}

// cgroupRows are the cgroups, throttled ones first (as the monitor
// lists them), then busiest.
func (s *scan) cgroupRows() []CgroupRow {
	rows := make([]CgroupRow, 0, len(s.cgroups))
	for path, e := range s.cgroups {
		c := CgroupRow{Name: e.name, Path: path, Threads: e.members, LimitCPUs: e.limit, Throttling: e.hasThrottle,
			Voluntary: s.mean(e, func(p *point) float64 { return p.vol }), Involuntary: s.mean(e, func(p *point) float64 { return p.inv }),
			CPU: s.mean(e, func(p *point) float64 { return p.cpu }), Throttled: s.mean(e, func(p *point) float64 { return p.throttle }),
			ThrottledMs: s.mean(e, func(p *point) float64 { return p.throttleMs }), Why: topReason(e.reasons)}
		for _, p := range e.series {
			c.PeakThrottl = max(c.PeakThrottl, p.throttle)
		}
		rows = append(rows, c)
	}
	sortBy(rows, func(a, b *CgroupRow) int {
		return cmp.Or(cmp.Compare(b.Throttled, a.Throttled), cmp.Compare(b.Total(), a.Total()), cmp.Compare(a.Path, b.Path))
	})
	return rows[:min(len(rows), topRows)]
}

func (s *scan) pairRows() []PairRow {
	rows := make([]PairRow, 0, len(s.pairs))
	for k, a := range s.pairs {
		p := PairRow{Waker: k.wakerComm, WakerPID: k.wakerPID, WakerTID: k.wakerTID, Wakee: k.wakeeComm, WakeePID: k.wakeePID,
			WakeeTID: k.wakeeTID, PerSec: a.wakeups / s.secs, CrossCPU: math.NaN(), P50: math.NaN(), P99Max: math.NaN()}
		if a.resolved > 0 {
			p.CrossCPU = 100 * a.cross / a.resolved
		}
		if a.timed > 0 {
			p.P50, p.P99Max = a.lat50/a.timed, a.p99
		}
		rows = append(rows, p)
	}
	sortBy(rows, func(a, b *PairRow) int {
		return cmp.Or(cmp.Compare(b.PerSec, a.PerSec), cmp.Compare(a.WakerTID, b.WakerTID), cmp.Compare(a.WakeeTID, b.WakeeTID),
			cmp.Compare(a.Waker, b.Waker))
	})
	return rows[:min(len(rows), topRows)]
}

// timeline buckets the intervals into at most maxPoints points, each the
// highest of its bucket, with the top groups' lines alike.
func (s *scan) timeline(groups []GroupRow) Timeline {
	n := len(s.intervals)
	per := (n + maxPoints - 1) / maxPoints
	pts := (n + per - 1) / per
	tl := Timeline{PerPoint: per, Times: make([]time.Time, pts), CS: make([]float64, pts), In: make([]float64, pts),
		IPI: make([]float64, pts), RunQ: make([]float64, pts), Baseline: make([]float64, pts), Spike: make([]bool, pts)}
	for i, iv := range s.intervals {
		j := i / per
		if i%per == 0 {
			tl.Times[j] = iv.time
		}
		tl.CS[j] = max(tl.CS[j], iv.cs)
		tl.In[j] = max(tl.In[j], iv.in)
		tl.IPI[j] = max(tl.IPI[j], iv.ipi)
		tl.RunQ[j] = max(tl.RunQ[j], iv.runq)
		tl.Baseline[j] = max(tl.Baseline[j], iv.spike.Baseline)
		tl.Spike[j] = tl.Spike[j] || iv.spike.Active
	}
	byName := map[string]*entity{}
	for _, e := range s.groups {
		byName[e.name] = e
	}
	for _, g := range groups[:min(len(groups), topGroupLines)] {
		if g.Total() <= 0 {
			break
		}
		l := Line{Name: g.Name, Values: make([]float64, pts)}
		for _, p := range byName[g.Name].series {
			j := int(p.idx) / per
			l.Values[j] = max(l.Values[j], p.vol+p.inv)
		}
		tl.Groups = append(tl.Groups, l)
	}
	return tl
}

// spikeList describes the spikes, largest peak first: when, how high
// against the baseline, who was busiest during it, and which groups and
// cgroups rose against the intervals before it.
func (s *scan) spikeList() []Spike {
	var out []Spike
	for _, sp := range s.spikes {
		first, last := s.intervals[sp.first], s.intervals[sp.last]
		x := Spike{Start: first.time.Add(-time.Duration(first.secs * float64(time.Second))), End: last.time,
			Intervals: sp.last - sp.first + 1, firstIdx: sp.first, lastIdx: sp.last}
		x.Duration = x.End.Sub(x.Start)
		var secs float64
		for i := sp.first; i <= sp.last; i++ {
			iv := s.intervals[i]
			secs += iv.secs
			if iv.cs > x.Peak {
				x.Peak, x.PeakAt, x.Baseline, x.Factor = iv.cs, iv.time, iv.spike.Baseline, iv.spike.Factor
				x.Reason = format.SpikeReason(iv.spike)
			}
		}
		x.Threads = threadRows(sp.threads, secs, spikeRows)
		x.Rises, x.Explained = s.rises(sp.first, sp.last)
		out = append(out, x)
	}
	sortBy(out, func(a, b *Spike) int { return cmp.Or(cmp.Compare(b.Peak, a.Peak), a.Start.Compare(b.Start)) })
	return out[:min(len(out), maxSpikes)]
}

// rises compares each group's and cgroup's cs/s during intervals
// first..last with the non-spike intervals in the spike window before
// first (all the window's non-spike intervals when there are none before),
// and returns the largest rises and the share of the host's rise the
// groups listed hold.
func (s *scan) rises(first, last int) ([]Rise, float64) {
	start := s.intervals[first].time.Add(-5 * time.Minute)
	before := make([]bool, len(s.intervals))
	nb := 0
	for i := 0; i < first; i++ {
		if !s.intervals[i].spike.Active && !s.intervals[i].time.Before(start) {
			before[i] = true
			nb++
		}
	}
	if nb == 0 {
		for i := range s.intervals {
			if (i < first || i > last) && !s.intervals[i].spike.Active {
				before[i] = true
				nb++
			}
		}
	}
	avg := func(e *entity, in func(int) bool) float64 {
		var sum, secs float64
		for i := range s.intervals {
			if in(i) {
				secs += s.intervals[i].secs
			}
		}
		for _, p := range e.series {
			if in(int(p.idx)) {
				sum += (p.vol + p.inv) * s.intervals[p.idx].secs
			}
		}
		if secs == 0 {
			return 0
		}
		return sum / secs
	}
	during := func(i int) bool { return i >= first && i <= last }
	was := func(i int) bool { return before[i] }
	var gr, cr []Rise
	for _, e := range s.groups {
		r := Rise{Kind: "group", Name: e.name, Before: avg(e, was), During: avg(e, during)}
		if r.During > r.Before {
			gr = append(gr, r)
		}
	}
	for _, e := range s.cgroups {
		r := Rise{Kind: "cgroup", Name: e.name, Before: avg(e, was), During: avg(e, during)}
		if r.During > r.Before {
			cr = append(cr, r)
		}
	}
	byRise := func(a, b *Rise) int {
		return cmp.Or(cmp.Compare(b.During-b.Before, a.During-a.Before), cmp.Compare(a.Name, b.Name))
	}
	sortBy(gr, byRise)
	sortBy(cr, byRise)
	gr, cr = gr[:min(len(gr), spikeRows)], cr[:min(len(cr), 3)]
	// The host's rise, against which the groups' is measured.
	var hb, hd, sb, sd float64
	for i, iv := range s.intervals {
		if before[i] {
			hb += iv.cs * iv.secs
			sb += iv.secs
		}
		if during(i) {
			hd += iv.cs * iv.secs
			sd += iv.secs
		}
	}
	var explained float64
	if sb > 0 && sd > 0 {
		if host := hd/sd - hb/sb; host > 0 {
			for _, r := range gr {
				explained += r.During - r.Before
			}
			explained = min(explained/host, 1)
		}
	}
	return append(gr, cr...), explained
}

// sortBy sorts s by cmp through sort.Slice rather than slices.SortFunc:
// each struct type would instantiate the generic sort anew, some 15 KB of
// binary apiece, where sort.Slice's one copy is already linked. cmp must
// be a total order (ties broken), as sort.Slice is not stable.
func sortBy[T any](s []T, cmp func(a, b *T) int) {
	sort.Slice(s, func(i, j int) bool { return cmp(&s[i], &s[j]) < 0 })
}
