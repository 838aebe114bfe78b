// Package output writes batch reports: text like pidstat -w -t, to paste
// into a ticket, and JSON lines, to pipe into jq.
package output

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Options choose the rows of a report.
type Options struct {
	// Top limits rows per report; 0 means all.
	Top int
	// Processes prints one row per process instead of per thread (text).
	Processes bool
}

// Text writes pidstat-style reports.
type Text struct {
	w    *bufio.Writer
	opts Options
	n    int
}

// NewText returns a writer of text reports to w.
func NewText(w io.Writer, opts Options) *Text {
	return &Text{w: bufio.NewWriter(w), opts: opts}
}

const commWidth = 16

// Write prints one report: a system line, a header and the rows.
func (t *Text) Write(s *model.Snapshot) error {
	w := t.w
	if t.n > 0 {
		w.WriteByte('\n')
	}
	t.n++
	sys := &s.System
	fmt.Fprintf(w, "%s  cs/s %s  in/s %s  res/s %s  run %d  blk %d  cpus %d  load %.2f %.2f %.2f",
		s.Time.Format("15:04:05"), num(sys.ContextSwitchesPerSec), num(sys.InterruptsPerSec), num(sys.ReschedIPIsPerSec),
		sys.ProcsRunning, sys.ProcsBlocked, sys.CPUs, sys.LoadAvg[0], sys.LoadAvg[1], sys.LoadAvg[2])
	if sys.HasPSI {
		fmt.Fprintf(w, "  psi %.2f", sys.PSICPUSomeAvg10)
	}
	if s.Unreadable > 0 {
		fmt.Fprintf(w, "  %d tasks unreadable", s.Unreadable)
	}
	if s.Spike.Active {
		fmt.Fprintf(w, "  SPIKE: %s", s.Spike.Reason)
	}
	w.WriteByte('\n')
	if t.opts.Processes {
		line(w, "%8s %-*s %7s %11s %11s %11s %7s %7s  %s", "PID", commWidth, "COMM", "THREADS", "CSWCH/s", "NVCSWCH/s", "TOTAL/s", "%CPU", "WAIT%", "HOT")
		for i, p := range s.Processes {
			if t.opts.Top > 0 && i >= t.opts.Top {
				break
			}
			line(w, "%8d %-*s %7d %11.2f %11.2f %11.2f %7.2f %7.2f  %s", p.PID, commWidth, clip(p.Comm), p.Threads,
				p.VoluntaryPerSec, p.InvoluntaryPerSec, p.TotalPerSec(), p.CPUPercent, p.WaitPercent, p.Reason)
		}
	} else {
		line(w, "%8s %8s %-*s %11s %11s %11s %7s %7s %-9s %s", "PID", "TID", commWidth, "COMM", "CSWCH/s", "NVCSWCH/s", "TOTAL/s", "%CPU", "WAIT%", "CPUS", "HOT")
		for i, th := range s.Threads {
			if t.opts.Top > 0 && i >= t.opts.Top {
				break
			}
			line(w, "%8d %8d %-*s %11.2f %11.2f %11.2f %7.2f %7.2f %-9s %s", th.PID, th.TID, commWidth, clip(th.Comm),
				th.VoluntaryPerSec, th.InvoluntaryPerSec, th.TotalPerSec(), th.CPUPercent, th.WaitPercent, cpus(th), th.Reason)
		}
	}
	return w.Flush()
}

// line writes one row without trailing blanks, which paste badly.
func line(w *bufio.Writer, format string, args ...any) {
	w.WriteString(strings.TrimRight(fmt.Sprintf(format, args...), " "))
	w.WriteByte('\n')
}

func clip(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	if len(s) > commWidth {
		return s[:commWidth]
	}
	return s
}

func cpus(t model.ThreadRates) string {
	s := t.CPUsAllowed
	if len(s) > 8 {
		s = s[:7] + "…"
	}
	if t.Pinned {
		return s + "*"
	}
	return s
}

func num(v float64) string { return model.Thousands(v) }

// JSON writes one object per report per line.
type JSON struct {
	w    io.Writer
	opts Options
	enc  *json.Encoder
}

// NewJSON returns a JSON-lines writer to w.
func NewJSON(w io.Writer, opts Options) *JSON {
	return &JSON{w: w, opts: opts, enc: json.NewEncoder(w)}
}

type jsonReport struct {
	Time      string        `json:"time"`
	Interval  float64       `json:"interval_s"`
	System    jsonSystem    `json:"system"`
	Processes []jsonProcess `json:"processes"`
	Threads   []jsonThread  `json:"threads"`
}

type jsonSystem struct {
	CS           float64  `json:"cs_per_s"`
	Intr         float64  `json:"intr_per_s"`
	Resched      float64  `json:"resched_ipi_per_s"`
	ProcsRunning uint64   `json:"procs_running"`
	ProcsBlocked uint64   `json:"procs_blocked"`
	CPUs         int      `json:"cpus"`
	PSI          *float64 `json:"psi_cpu_some_avg10,omitempty"`
}

type jsonProcess struct {
	PID     int     `json:"pid"`
	Comm    string  `json:"comm"`
	Threads int     `json:"threads"`
	Vol     float64 `json:"cswch_per_s"`
	Invol   float64 `json:"nvcswch_per_s"`
	CPU     float64 `json:"cpu_pct"`
}

type jsonThread struct {
	PID         int     `json:"pid"`
	TID         int     `json:"tid"`
	Comm        string  `json:"comm"`
	Vol         float64 `json:"cswch_per_s"`
	Invol       float64 `json:"nvcswch_per_s"`
	CPU         float64 `json:"cpu_pct"`
	Wait        float64 `json:"wait_pct"`
	CPUsAllowed string  `json:"cpus_allowed"`
	Hot         bool    `json:"hot"`
	Reason      string  `json:"reason"`
}

// Write prints one report as a line of JSON.
func (j *JSON) Write(s *model.Snapshot) error {
	r := jsonReport{
		Time:     s.Time.Format(time.RFC3339Nano),
		Interval: round(s.Interval.Seconds(), 6),
		System: jsonSystem{
			CS:           round2(s.System.ContextSwitchesPerSec),
			Intr:         round2(s.System.InterruptsPerSec),
			Resched:      round2(s.System.ReschedIPIsPerSec),
			ProcsRunning: s.System.ProcsRunning,
			ProcsBlocked: s.System.ProcsBlocked,
			CPUs:         s.System.CPUs,
		},
		Processes: []jsonProcess{},
		Threads:   []jsonThread{},
	}
	if s.System.HasPSI {
		v := round2(s.System.PSICPUSomeAvg10)
		r.System.PSI = &v
	}
	for i, p := range s.Processes {
		if j.opts.Top > 0 && i >= j.opts.Top {
			break
		}
		r.Processes = append(r.Processes, jsonProcess{p.PID, p.Comm, p.Threads, round2(p.VoluntaryPerSec), round2(p.InvoluntaryPerSec), round2(p.CPUPercent)})
	}
	for i, t := range s.Threads {
		if j.opts.Top > 0 && i >= j.opts.Top {
			break
		}
		r.Threads = append(r.Threads, jsonThread{t.PID, t.TID, t.Comm, round2(t.VoluntaryPerSec), round2(t.InvoluntaryPerSec),
			round2(t.CPUPercent), round2(t.WaitPercent), t.CPUsAllowed, t.Hot, t.Reason})
	}
	return j.enc.Encode(&r)
}

func round2(v float64) float64 { return round(v, 2) }

func round(v float64, places int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}
