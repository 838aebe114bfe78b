package output

import (
	"io"
	"math"
	"slices"
	"time"

	"encoding/json"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
)

// JSON writes one object per report per line.
type JSON struct {
	w       io.Writer
	opts    Options
	enc     *json.Encoder
	scratch *threadScratch
}

// NewJSON returns a JSON-lines writer to w.
func NewJSON(w io.Writer, opts Options) *JSON {
	enc := json.NewEncoder(w)
	// A comm like "a<b>&c" stays readable in jq's input.
	enc.SetEscapeHTML(false)
	return &JSON{w: w, opts: opts, enc: enc, scratch: newThreadScratch()}
}

type jsonReport struct {
	Time      string                         `json:"time"`
	Interval  float64                        `json:"interval_s"`
	System    jsonSystem                     `json:"system"`
	Processes []jsonRow[*model.ProcessRates] `json:"processes"`
	Threads   []jsonThread                   `json:"threads"`
	Cgroups   []jsonRow[*model.CgroupRates]  `json:"cgroups"`
	Host      *jsonHost                      `json:"host,omitempty"`
	// Present only with --wakeups.
	Wakeups            *[]jsonRow[*model.WakeupPair] `json:"wakeups,omitempty"`
	WakeupsDropped     *uint64                       `json:"wakeups_dropped,omitempty"`
	WakeupsUnavailable string                        `json:"wakeups_unavailable,omitempty"`
	WakeupsWithin      *jsonWakeFigures              `json:"wakeups_within,omitempty"`
	// Present only with --stacks.
	StacksUnavailable string  `json:"stacks_unavailable,omitempty"`
	StacksDropped     *uint64 `json:"stacks_dropped,omitempty"`
	StacksTargets     []int   `json:"stacks_targets,omitempty"`
	// StacksAttached is the share of the interval the tracer was
	// attached; absent where unknown (an older recording).
	StacksAttached *float64 `json:"stacks_attached,omitempty"`
	// HidePID is present when the procfs hides other users' processes
	// from this user: the rows are this user's, unattributed_cs_per_s is
	// mostly theirs.
	HidePID string `json:"hidepid,omitempty"`
}

// jsonHost is what the figures were measured on (gopsutil's host facts).
type jsonHost struct {
	Hostname string  `json:"hostname"`
	Kernel   string  `json:"kernel"`
	CPUModel string  `json:"cpu_model"`
	CPUs     int     `json:"cpus"`
	MemTotal uint64  `json:"mem_total_bytes"`
	Uptime   float64 `json:"uptime_s"`
}

// jsonWakeFigures are the wake-ups among the --pid processes' threads
// (model.WakeFigures).
type jsonWakeFigures struct {
	PerSec   float64 `json:"per_s"`
	CrossCPU float64 `json:"cross_cpu_pct"`
	P50      float64 `json:"latency_p50_us"`
	P99      float64 `json:"latency_p99_us"`
}

// knownJSON is v rounded, or nil when it is not known.
func knownJSON(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	r := round2(v)
	return &r
}

type jsonSystem struct {
	// Source is what read the tasks: "bpf-task-iter" or "proc".
	Source string `json:"source,omitempty"`
	// null when the interval has no host-wide rates; NoRates says why.
	CS           *float64 `json:"cs_per_s"`
	Intr         *float64 `json:"intr_per_s"`
	Resched      *float64 `json:"resched_ipi_per_s"`
	NoRates      string   `json:"no_rates,omitempty"`
	ProcsRunning uint64   `json:"procs_running"`
	ProcsBlocked uint64   `json:"procs_blocked"`
	CPUs         int      `json:"cpus"`
	// Unreadable counts the tasks that exist but could not be read (the
	// text report's "N tasks unreadable").
	Unreadable int      `json:"unreadable_tasks"`
	PSI        *float64 `json:"psi_cpu_some_avg10,omitempty"`
	// Unattributed is cs_per_s minus the sum over every thread row; null
	// with cs_per_s.
	Unattributed *float64 `json:"unattributed_cs_per_s"`
	// Baseline is the recent cs_per_s the spike rule judges against;
	// null until there is enough history for one.
	Baseline *float64 `json:"baseline_cs_per_s"`
	// Spike is why cs_per_s is a spike; absent when it is not.
	Spike string `json:"spike,omitempty"`
}

// jsonStack is one of a thread's top stacks over the last refreshes.
type jsonStack struct {
	// Frames are function names, innermost first (kernel, then user).
	Frames []string `json:"frames"`
	// Own is the innermost frame of the program's own code.
	Own   string  `json:"own,omitempty"`
	Waker string  `json:"waker_comm,omitempty"`
	Share float64 `json:"share"`
	Count uint64  `json:"count"`
	// NoFramePointers names the object a short user stack likely stopped in.
	NoFramePointers string `json:"no_frame_pointers,omitempty"`
	// Truncated says why the user stack ends before its outermost frame.
	Truncated string `json:"truncated,omitempty"`
}

func jsonStacks(ss []model.StackShare) []jsonStack {
	if len(ss) == 0 {
		return nil
	}
	out := make([]jsonStack, 0, len(ss))
	for _, s := range ss {
		out = append(out, jsonStack{s.Frames, s.Own, s.Waker, format.Round(s.Share, 3), s.Count, s.NoFramePointers, s.Truncated})
	}
	return out
}

// Write prints one report as a line of JSON.
func (j *JSON) Write(s *model.Snapshot) error {
	r := jsonReport{
		Time: s.Time.Format(time.RFC3339Nano),
		// The interval keeps microseconds where rates keep two decimals:
		// rate × interval gives back the kernel's count, and a 1.004 s
		// interval written as 1 would hide the sampler's drift.
		Interval: format.Round(s.Interval.Seconds(), 6),
		System: jsonSystem{
			ProcsRunning: s.System.ProcsRunning,
			ProcsBlocked: s.System.ProcsBlocked,
			CPUs:         s.System.CPUs,
			Unreadable:   s.Unreadable,
			NoRates:      s.System.NoRates,
		},
		Processes: []jsonRow[*model.ProcessRates]{},
		Threads:   []jsonThread{},
		Cgroups:   []jsonRow[*model.CgroupRates]{},
		HidePID:   j.opts.HidePID,
	}
	if s.System.NoRates == "" {
		r.System.CS, r.System.Intr, r.System.Resched = knownJSON(s.System.ContextSwitchesPerSec, true),
			knownJSON(s.System.InterruptsPerSec, true), knownJSON(s.System.ReschedIPIsPerSec, true)
		r.System.Unattributed = knownJSON(s.UnattributedPerSec, true)
	}
	if s.System.HasPSI {
		v := round2(s.System.PSICPUSomeAvg10)
		r.System.PSI = &v
	}
	if s.Spike.Baseline > 0 {
		v := round2(s.Spike.Baseline)
		r.System.Baseline = &v
	}
	if s.Spike.Active {
		r.System.Spike = format.SpikeReason(s.Spike)
	}
	r.System.Source = s.Source
	if h := j.opts.Host; h != nil {
		r.Host = &jsonHost{h.Hostname, h.Kernel, h.CPUModel, h.CPUs, h.MemTotal, math.Floor(h.Uptime(s.Time).Seconds())}
	}
	r.Processes = appendRows(r.Processes, fields.Process[:], len(s.Processes), func(i int) *model.ProcessRates { return &s.Processes[i] }, j.opts.Top, j.scratch)
	for i := range s.Threads {
		if j.opts.Top > 0 && i >= j.opts.Top {
			break
		}
		jt := jsonThread{&s.Threads[i], j.scratch}
		r.Threads = append(r.Threads, jt)
	}
	r.Cgroups = appendRows(r.Cgroups, fields.Cgroup[:], len(s.Cgroups), func(i int) *model.CgroupRates { return &s.Cgroups[i] }, j.opts.Top, j.scratch)
	if wk := s.Wakeups; wk != nil {
		pairs := appendRows([]jsonRow[*model.WakeupPair]{}, fields.Wakeup[:], len(wk.Pairs), func(i int) *model.WakeupPair { return &wk.Pairs[i] }, j.opts.Top, j.scratch)
		r.Wakeups, r.WakeupsUnavailable = &pairs, wk.Unavailable
		if len(j.opts.PIDs) > 0 {
			if f, ok := wk.Among(func(pid, _ int) bool { return slices.Contains(j.opts.PIDs, pid) }); ok {
				r.WakeupsWithin = &jsonWakeFigures{round2(f.PerSec), round2(f.CrossCPUPercent), round2(f.LatencyP50Micros), round2(f.LatencyP99Micros)}
			}
		}
		// Without the tracer there is no count of dropped wake-ups either.
		if wk.Unavailable == "" {
			dropped := wk.Dropped
			r.WakeupsDropped = &dropped
		}
	}
	if st := s.Stacks; st != nil {
		r.StacksUnavailable = st.Unavailable
		if st.Unavailable == "" {
			d := st.Dropped
			r.StacksDropped, r.StacksTargets = &d, st.Targets
			if a := st.Attached; a > 0 && a <= 1 {
				a = round2(a)
				r.StacksAttached = &a
			}
		}
	}
	return j.enc.Encode(&r)
}

func round2(v float64) float64 { return format.Round(v, 2) }
