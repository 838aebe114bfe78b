package model

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// DefaultHotThreshold is the switches/s at which a thread is hot when
// Options leaves it unset.
const DefaultHotThreshold = 1000

// Options tune Compute.
type Options struct {
	// HotThreshold is total switches/s at or above which a row is hot.
	HotThreshold float64
}

// Compute derives the rates between two samples. It is pure: the same two
// samples always give the same Snapshot. Both samples' Tasks must be sorted
// by PID, then TID, as the sampler produces them.
func Compute(prev, cur *Sample, opts Options) Snapshot {
	hot := opts.HotThreshold
	if !(hot > 0) {
		hot = DefaultHotThreshold
	}
	snap := Snapshot{
		Time:       cur.Time,
		Interval:   cur.Time.Sub(prev.Time),
		Tasks:      len(cur.Tasks),
		Unreadable: cur.Unreadable,
	}
	snap.System = systemRates(&prev.System, &cur.System, snap.Interval)
	if snap.Interval <= 0 {
		return snap
	}
	secs := snap.Interval.Seconds()
	ns := float64(snap.Interval.Nanoseconds())

	snap.Self = SelfRates{
		CPUPercent:     nonNeg(float64(cur.Self.CPUTime-prev.Self.CPUTime) / ns * 100),
		SwitchesPerSec: delta(prev.Self.VoluntarySwitches+prev.Self.InvoluntarySwitches, cur.Self.VoluntarySwitches+cur.Self.InvoluntarySwitches) / secs,
	}

	// Merge-join on (PID, TID): both lists are sorted, so one pass, no map.
	var procs []ProcessRates
	i := 0
	for j := range cur.Tasks {
		c := &cur.Tasks[j]
		if n := len(procs); n == 0 || procs[n-1].PID != c.PID {
			procs = append(procs, ProcessRates{PID: c.PID, Comm: c.ProcessComm})
		}
		pr := &procs[len(procs)-1]
		pr.Threads++
		for i < len(prev.Tasks) && less(&prev.Tasks[i], c) {
			i++
		}
		if i >= len(prev.Tasks) || prev.Tasks[i].PID != c.PID || prev.Tasks[i].TID != c.TID {
			continue // new thread: no rate until it has two samples
		}
		p := &prev.Tasks[i]
		if p.StartTime != c.StartTime || c.VoluntarySwitches < p.VoluntarySwitches ||
			c.InvoluntarySwitches < p.InvoluntarySwitches || c.RunNs < p.RunNs || c.WaitNs < p.WaitNs {
			continue // the TID now names another thread
		}
		t := ThreadRates{
			PID: c.PID, TID: c.TID, Comm: c.Comm, ProcessComm: c.ProcessComm,
			VoluntaryPerSec:   float64(c.VoluntarySwitches-p.VoluntarySwitches) / secs,
			InvoluntaryPerSec: float64(c.InvoluntarySwitches-p.InvoluntarySwitches) / secs,
			CPUPercent:        float64(c.RunNs-p.RunNs) / ns * 100,
			WaitPercent:       float64(c.WaitNs-p.WaitNs) / ns * 100,
			CPUsAllowed:       c.CPUsAllowed,
			State:             c.State,
			LastCPU:           c.LastCPU,
		}
		if t.TotalPerSec() == 0 && t.CPUPercent == 0 && t.WaitPercent == 0 {
			continue
		}
		if n := CountCPUs(c.CPUsAllowed); n > 0 && n < cur.System.CPUs {
			t.Pinned = true
		}
		t.Hot, t.Reason = classify(t.VoluntaryPerSec, t.InvoluntaryPerSec, t.WaitPercent, hot)
		pr.VoluntaryPerSec += t.VoluntaryPerSec
		pr.InvoluntaryPerSec += t.InvoluntaryPerSec
		pr.CPUPercent += t.CPUPercent
		pr.WaitPercent += t.WaitPercent
		snap.Threads = append(snap.Threads, t)
	}
	for k := range procs {
		p := &procs[k]
		if p.TotalPerSec() == 0 && p.CPUPercent == 0 && p.WaitPercent == 0 {
			continue
		}
		p.Hot, p.Reason = classify(p.VoluntaryPerSec, p.InvoluntaryPerSec, p.WaitPercent, hot)
		snap.Processes = append(snap.Processes, *p)
	}
	slices.SortFunc(snap.Threads, func(a, b ThreadRates) int {
		return byRate(a.TotalPerSec(), b.TotalPerSec(), a.CPUPercent, b.CPUPercent, a.PID, b.PID, a.TID, b.TID)
	})
	slices.SortFunc(snap.Processes, func(a, b ProcessRates) int {
		return byRate(a.TotalPerSec(), b.TotalPerSec(), a.CPUPercent, b.CPUPercent, a.PID, b.PID, 0, 0)
	})
	return snap
}

func less(a, b *TaskCounters) bool {
	return a.PID < b.PID || a.PID == b.PID && a.TID < b.TID
}

func byRate(ta, tb, ca, cb float64, pa, pb, ia, ib int) int {
	switch {
	case ta != tb:
		if ta > tb {
			return -1
		}
		return 1
	case ca != cb:
		if ca > cb {
			return -1
		}
		return 1
	case pa != pb:
		return pa - pb
	}
	return ia - ib
}

// classify applies the hot rule: at or above the threshold, mostly
// involuntary switches mean the thread is preempted (more runnable threads
// than CPUs), mostly voluntary mean it blocks (locks, I/O, hand-offs).
func classify(vol, invol, waitPct, threshold float64) (bool, string) {
	if vol+invol < threshold {
		return false, ""
	}
	why := "blocking"
	if invol > vol {
		why = "preempted"
	}
	return true, fmt.Sprintf("%s, wait %.0f%%", why, waitPct)
}

func systemRates(prev, cur *SystemCounters, interval time.Duration) SystemRates {
	r := SystemRates{
		ProcsRunning:    cur.ProcsRunning,
		ProcsBlocked:    cur.ProcsBlocked,
		CPUs:            cur.CPUs,
		PSICPUSomeAvg10: cur.PSICPUSomeAvg10,
		HasPSI:          cur.HasPSI,
		LoadAvg:         cur.LoadAvg,
	}
	if interval <= 0 {
		return r
	}
	secs := interval.Seconds()
	r.ContextSwitchesPerSec = delta(prev.ContextSwitches, cur.ContextSwitches) / secs
	r.InterruptsPerSec = delta(prev.Interrupts, cur.Interrupts) / secs
	r.ReschedIPIsPerSec = delta(prev.ReschedIPIs, cur.ReschedIPIs) / secs
	n := min(len(cur.InterruptsPerCPU), len(prev.InterruptsPerCPU), len(cur.ReschedPerCPU), len(prev.ReschedPerCPU))
	if n > 0 {
		r.PerCPU = make([]CPURates, n)
		for c := range n {
			r.PerCPU[c] = CPURates{
				InterruptsPerSec:  delta(prev.InterruptsPerCPU[c], cur.InterruptsPerCPU[c]) / secs,
				ReschedIPIsPerSec: delta(prev.ReschedPerCPU[c], cur.ReschedPerCPU[c]) / secs,
			}
		}
	}
	return r
}

// delta is cur-prev, or 0 when the counter went backwards (a reset or a
// different source): never negative, never a wrapped huge number.
func delta(prev, cur uint64) float64 {
	if cur < prev {
		return 0
	}
	return float64(cur - prev)
}

func nonNeg(v float64) float64 {
	if v < 0 || math.IsNaN(v) {
		return 0
	}
	return v
}

// CountCPUs counts the CPUs in a list like "0-3,8,10-11"; 0 when malformed.
func CountCPUs(list string) int {
	n := 0
	for i := 0; i < len(list); {
		lo, j, ok := atoi(list, i)
		if !ok {
			return 0
		}
		hi := lo
		if j < len(list) && list[j] == '-' {
			if hi, j, ok = atoi(list, j+1); !ok || hi < lo {
				return 0
			}
		}
		n += hi - lo + 1
		if j < len(list) {
			if list[j] != ',' {
				return 0
			}
			j++
		}
		i = j
	}
	return n
}

func atoi(s string, i int) (int, int, bool) {
	v, start := 0, i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && v < 1<<20 {
		v = v*10 + int(s[i]-'0')
		i++
	}
	return v, i, i > start
}
