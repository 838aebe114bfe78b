// Package report turns a window of a recording into an incident report
// and two windows into a before/after comparison. It reads recordings
// through pipeline.Player, so every figure is the model's, the one replay
// shows; the results are plain data (Report, Diff), which the HTML, text
// and JSON renderers of this package word.
package report

import (
	"math"
	"strconv"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record"
)

// interval is what a timeline keeps of one snapshot.
type interval struct {
	time  time.Time
	secs  float64
	cs    float64
	in    float64
	ipi   float64
	runq  float64
	spike model.Spike
}

// groupKey names a thread group. Within one recording a pool belongs to
// its process (the monitor's g rule); across two recordings PIDs differ,
// so a comparison keys groups by the process's name instead.
type groupKey struct {
	pattern string
	process string
	pid     int
}

// point is one interval's figures of one group or cgroup.
type point struct {
	idx int32
	// vol, inv: switches/s; cpu, wait: percent of one CPU (summed over
	// the members).
	vol, inv, cpu, wait float64
	// wakeups, cross and latW are the wake-ups into the members, the
	// cross-CPU ones among those resolved, and the wake-ups the p50
	// latency is weighted by; lat is the p50 times latW.
	wakeups, resolved, cross, latW, lat float64
	// throttle and throttleMs are a cgroup's throttled share of periods
	// and throttled ms/s.
	throttle, throttleMs float64
	members              int
}

// entity is a thread group or a cgroup, with its series.
type entity struct {
	key     groupKey
	name    string
	members int
	series  []point
	// limit is a cgroup's CPU quota; hasThrottle says it was known.
	limit       float64
	hasThrottle bool
	// reasons weighs each WHY its members gave by their switches.
	reasons map[string]float64
}

// threadAgg is one thread's sums over a window: rates times seconds.
type threadAgg struct {
	pid, tid           int
	comm, processComm  string
	group              string
	vol, inv, cpu, wai float64
	hotSecs            float64
	reasons            map[string]float64
}

type tidKey struct{ pid, tid int }

// pairKey is one waker→wakee pair.
type pairKey struct {
	wakerPID, wakerTID int
	wakerComm          string
	wakeePID, wakeeTID int
	wakeeComm          string
}

type pairAgg struct {
	wakeups, resolved, cross, timed, lat50 float64
	p99                                    float64
}

// scan is one pass over a window of a recording.
type scan struct {
	byName    bool
	intervals []interval
	secs      float64
	groups    map[groupKey]*entity
	cgroups   map[string]*entity
	threads   map[tidKey]*threadAgg
	pairs     map[pairKey]*pairAgg
	// spikes are the runs of spike intervals, each with its threads' sums.
	spikes     []*spikeScan
	inSpike    bool
	offCPU     *flameNode
	woken      *flameNode
	hasWakeups bool
	hasStacks  bool
	// scratch, reused per interval.
	tidGroup map[int]groupKey
	perGroup map[groupKey]*point
}

type spikeScan struct {
	first, last int
	threads     map[tidKey]*threadAgg
}

// Pass gathers a window's figures from its snapshots, given in order to
// Add: make Add the pipeline.Visit of the player's marking pass, so opening
// the recording is the report's one pass over it.
type Pass struct{ s *scan }

// ForReport is a Pass for an incident report (Pass.Report).
func ForReport() *Pass { return &Pass{newScan(false)} }

// ForDiff is a Pass for one side of a comparison (Compare): it keys thread
// groups by process name rather than PID, since PIDs differ between runs.
func ForDiff() *Pass { return &Pass{newScan(true)} }

// Add takes in one snapshot of the window, the next in order.
func (ps *Pass) Add(snap *model.Snapshot) { ps.s.add(snap) }

// scan is the pass's figures, or record.ErrEmpty when it saw no interval.
func (ps *Pass) scan() (*scan, error) {
	if len(ps.s.intervals) == 0 {
		return nil, record.ErrEmpty
	}
	return ps.s, nil
}

func newScan(byName bool) *scan {
	return &scan{byName: byName, groups: map[groupKey]*entity{}, cgroups: map[string]*entity{},
		threads: map[tidKey]*threadAgg{}, pairs: map[pairKey]*pairAgg{},
		offCPU: newFlame("off-CPU"), woken: newFlame("woken from"),
		tidGroup: map[int]groupKey{}, perGroup: map[groupKey]*point{}}
}

func (s *scan) key(t *model.ThreadRates) groupKey {
	pat := model.ThreadGroup(t.Comm)
	if model.GroupAcrossProcesses(pat) {
		return groupKey{pattern: pat}
	}
	if s.byName {
		return groupKey{pattern: pat, process: t.ProcessComm}
	}
	return groupKey{pattern: pat, process: t.ProcessComm, pid: t.PID}
}

func (s *scan) add(snap *model.Snapshot) {
	secs := snap.Interval.Seconds()
	if !(secs > 0) {
		return
	}
	idx := int32(len(s.intervals))
	sys := &snap.System
	s.intervals = append(s.intervals, interval{time: snap.Time, secs: secs, cs: sys.ContextSwitchesPerSec,
		in: sys.InterruptsPerSec, ipi: sys.ReschedIPIsPerSec, runq: float64(sys.ProcsRunning), spike: snap.Spike})
	s.secs += secs

	var sp *spikeScan
	if snap.Spike.Active {
		if !s.inSpike {
			s.spikes = append(s.spikes, &spikeScan{first: int(idx), threads: map[tidKey]*threadAgg{}})
		}
		sp = s.spikes[len(s.spikes)-1]
		sp.last = int(idx)
	}
	s.inSpike = snap.Spike.Active

	clear(s.tidGroup)
	clear(s.perGroup)
	for i := range snap.Threads {
		t := &snap.Threads[i]
		k := s.key(t)
		s.tidGroup[t.TID] = k
		g := s.perGroup[k]
		if g == nil {
			g = &point{idx: idx}
			s.perGroup[k] = g
			e := s.groups[k]
			if e == nil {
				e = &entity{key: k, name: groupName(k), reasons: map[string]float64{}}
				s.groups[k] = e
			}
		}
		g.members++
		g.vol += t.VoluntaryPerSec
		g.inv += t.InvoluntaryPerSec
		g.cpu += t.CPUPercent
		g.wait += t.WaitPercent
		if why := t.Why.String(); t.Hot && why != "" {
			s.groups[k].reasons[why] += t.TotalPerSec() * secs
		}
		s.addThread(s.threads, t, k, secs)
		if sp != nil {
			s.addThread(sp.threads, t, k, secs)
		}
	}
	if w := snap.Wakeups; w != nil && w.Unavailable == "" {
		s.hasWakeups = true
		for i := range w.Pairs {
			s.addPair(&w.Pairs[i], secs)
		}
	}
	for k, g := range s.perGroup {
		e := s.groups[k]
		e.members = max(e.members, g.members)
		e.series = append(e.series, *g)
	}
	for i := range snap.Cgroups {
		c := &snap.Cgroups[i]
		e := s.cgroups[c.Path]
		if e == nil {
			e = &entity{key: groupKey{pattern: c.Path}, name: c.Name, reasons: map[string]float64{}}
			s.cgroups[c.Path] = e
		}
		e.members = max(e.members, c.Threads)
		e.limit = c.LimitCPUs
		e.hasThrottle = e.hasThrottle || c.HasThrottling
		if why := c.Why.String(); c.Hot && why != "" {
			e.reasons[why] += c.TotalPerSec() * secs
		}
		e.series = append(e.series, point{idx: idx, vol: c.VoluntaryPerSec, inv: c.InvoluntaryPerSec, cpu: c.CPUPercent,
			throttle: c.ThrottledPercent, throttleMs: c.ThrottledMsPerSec})
	}
	if st := snap.Stacks; st != nil && st.Unavailable == "" {
		for _, f := range st.Folded {
			if len(f.Frames) < 2 {
				continue
			}
			s.hasStacks = true
			if f.Frames[1] == "[off-cpu]" {
				s.offCPU.add(f.Frames, f.Count)
			} else {
				s.woken.add(f.Frames, f.Count)
			}
		}
	}
}

// addThread adds t's interval to the sums in m.
func (s *scan) addThread(m map[tidKey]*threadAgg, t *model.ThreadRates, k groupKey, secs float64) {
	a := m[tidKey{t.PID, t.TID}]
	if a == nil {
		a = &threadAgg{pid: t.PID, tid: t.TID, group: groupName(k), reasons: map[string]float64{}}
		m[tidKey{t.PID, t.TID}] = a
	}
	// The latest name: a thread renamed mid-window is shown as it ended.
	a.comm, a.processComm = t.Comm, t.ProcessComm
	a.vol += t.VoluntaryPerSec * secs
	a.inv += t.InvoluntaryPerSec * secs
	a.cpu += t.CPUPercent * secs
	a.wai += t.WaitPercent * secs
	if t.Hot {
		a.hotSecs += secs
		if why := t.Why.String(); why != "" {
			a.reasons[why] += secs
		}
	}
}

func (s *scan) addPair(w *model.WakeupPair, secs float64) {
	n := w.PerSec * secs
	k := pairKey{w.WakerPID, w.WakerTID, w.WakerComm, w.WakeePID, w.WakeeTID, w.WakeeComm}
	if s.byName {
		k = pairKey{wakerComm: model.ThreadGroup(w.WakerComm), wakeeComm: model.ThreadGroup(w.WakeeComm)}
	}
	a := s.pairs[k]
	if a == nil {
		a = &pairAgg{}
		s.pairs[k] = a
	}
	a.wakeups += n
	if w.CrossCPUKnown() {
		a.resolved += float64(w.Resolved)
		a.cross += w.CrossCPUPercent / 100 * float64(w.Resolved)
	}
	if w.LatencyKnown() {
		a.timed += n
		a.lat50 += w.LatencyP50Micros * n
		a.p99 = max(a.p99, w.LatencyP99Micros)
	}
	// The wakee's group gets the wake-ups into it, for a comparison's
	// cross-CPU share and latency.
	if gk, ok := s.tidGroup[w.WakeeTID]; ok {
		if g := s.perGroup[gk]; g != nil {
			g.wakeups += w.PerSec
			if w.CrossCPUKnown() {
				g.resolved += w.PerSec
				g.cross += w.CrossCPUPercent / 100 * w.PerSec
			}
			if w.LatencyKnown() {
				g.latW += w.PerSec
				g.lat += w.LatencyP50Micros * w.PerSec
			}
		}
	}
}

// groupName is how a group is shown: "worker-* in svc (PID 1000)".
func groupName(k groupKey) string {
	switch {
	case k.process == "":
		return k.pattern
	case k.pid == 0:
		return k.pattern + " in " + k.process
	}
	return k.pattern + " in " + k.process + " (PID " + strconv.Itoa(k.pid) + ")"
}

// mean is v's average over the window's seconds; an interval the entity
// did not appear in counts as zero.
func (s *scan) mean(e *entity, v func(*point) float64) float64 {
	var sum float64
	for i := range e.series {
		p := &e.series[i]
		sum += v(p) * s.intervals[p.idx].secs
	}
	if s.secs == 0 {
		return math.NaN()
	}
	return sum / s.secs
}

// topReason is the WHY given for the most switches (or seconds).
func topReason(m map[string]float64) string {
	best, bw := "", 0.0
	for r, w := range m {
		if w > bw || (w == bw && r < best) {
			best, bw = r, w
		}
	}
	return best
}
