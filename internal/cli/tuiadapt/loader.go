// Package tuiadapt gives the TUI the capabilities it declares from the
// parts of ctxtop that provide them: tui.Loader from package load's
// workloads, tui.Replay from a recording's pipeline.Player. It belongs to
// the composition root (package cli), so that the TUI stays a view that
// imports neither.
package tuiadapt

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/tui"
)

// loadLoader runs the workloads of package load, each in a process of its
// own, so the monitor's own threads stay as quiet as when idle.
type loadLoader struct{ cpus []int }

// NewLoader returns the Loader backed by ctxtop's own workloads.
func NewLoader() tui.Loader {
	cpus, _ := load.AllowedCPUs()
	return loadLoader{cpus: cpus}
}

func (l loadLoader) Modes() []tui.LoadMode {
	// Every mode, the syscall baseline too: that cs/s does not move while
	// it runs is the point it makes.
	var out []tui.LoadMode
	for _, i := range load.Modes() {
		md := tui.LoadMode{Name: string(i.Mode), Title: i.Title, MaxCPUs: i.MaxCPUs, Unit: i.Unit.One, Units: i.Unit.Many}
		if i.Threaded {
			md.Threads = l.threads()
		}
		out = append(out, md)
	}
	return out
}

// threads is how many threads a threaded mode runs unless told: one per
// allowed CPU, as ctxtop load does.
func (l loadLoader) threads() int { return max(len(l.cpus), 1) }

func (l loadLoader) AllowedCPUs() []int { return l.cpus }

// Start runs mode, which may carry options after its name, as the demo's
// steps do: "futex working-set=1M", "pool threads=4x" (four per CPU).
func (l loadLoader) Start(mode string, cpus []int) (tui.LoadRun, error) {
	cfg, err := l.config(mode)
	if err != nil {
		return nil, err
	}
	// A mode that cannot be pinned refuses cpus rather than ignore them:
	// the panel asks for none.
	cfg.CPUs = cpus
	r, err := load.Start(cfg)
	if err != nil {
		return nil, err
	}
	return loadRun{r}, nil
}

func (l loadLoader) config(spec string) (load.Config, error) {
	f := strings.Fields(spec)
	if len(f) == 0 {
		return load.Config{}, fmt.Errorf("no mode given")
	}
	m, err := load.ParseMode(f[0])
	if err != nil {
		return load.Config{}, err
	}
	cfg := load.Config{Mode: m}
	if m.Info().Threaded {
		cfg.Threads = l.threads()
	}
	for _, opt := range f[1:] {
		k, v, _ := strings.Cut(opt, "=")
		switch k {
		case "working-set":
			if cfg.WorkingSet, err = load.ParseSize(v); err != nil {
				return cfg, err
			}
		case "threads":
			per, n := strings.CutSuffix(v, "x")
			k, err := strconv.Atoi(per)
			if err != nil || k < 1 {
				return cfg, fmt.Errorf("threads=%q", v)
			}
			if n {
				k *= max(len(l.cpus), 1)
			}
			cfg.Threads = k
		default:
			return cfg, fmt.Errorf("unknown load option %q", opt)
		}
	}
	return cfg, nil
}

type loadRun struct{ r *load.Run }

func (x loadRun) Progress() tui.LoadProgress {
	p := x.r.Progress()
	lp := tui.LoadProgress{Elapsed: p.Elapsed, RoundTrips: p.RoundTrips, NsPerRoundTrip: p.NsPerRoundTrip}
	// Every thread of the workload process is the load's (its runtime's
	// too); process mode's partner is marked by its thread.
	if len(p.PIDs) > 0 {
		lp.ChildPID = p.PIDs[0]
	}
	for _, t := range p.Threads {
		lp.TIDs = append(lp.TIDs, t.TID)
	}
	return lp
}

func (x loadRun) Stop() tui.LoadSummary {
	s := x.r.Stop()
	return tui.LoadSummary{NsPerRoundTrip: s.NsPerRoundTrip, NsPerSwitch: s.NsPerSwitch}
}

func (x loadRun) Done() <-chan struct{} { return x.r.Done() }
