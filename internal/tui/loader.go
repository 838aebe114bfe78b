package tui

import "github.com/ctxtop/ctxtop/internal/load"

// loadLoader runs the workloads of package load, each in a process of its
// own, so the monitor's own threads stay as quiet as when idle.
type loadLoader struct{ cpus []int }

// NewLoader returns the Loader backed by ctxtop's own workloads.
func NewLoader() Loader {
	cpus, _ := load.AllowedCPUs()
	return loadLoader{cpus: cpus}
}

func (l loadLoader) Modes() []string {
	var out []string
	for _, m := range load.Modes() {
		// The syscall baseline makes no context switch: nothing to watch.
		if m != load.ModeSyscall {
			out = append(out, string(m))
		}
	}
	return out
}

func (l loadLoader) AllowedCPUs() []int { return l.cpus }

func (l loadLoader) Start(mode string, cpus []int) (LoadRun, error) {
	m, err := load.ParseMode(mode)
	if err != nil {
		return nil, err
	}
	r, err := load.Start(load.Config{Mode: m, CPUs: cpus})
	if err != nil {
		return nil, err
	}
	return loadRun{r}, nil
}

type loadRun struct{ r *load.Run }

func (x loadRun) Progress() LoadProgress {
	p := x.r.Progress()
	lp := LoadProgress{Elapsed: p.Elapsed, RoundTrips: p.RoundTrips, NsPerRoundTrip: p.NsPerRoundTrip}
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

func (x loadRun) Stop() LoadSummary {
	s := x.r.Stop()
	return LoadSummary{NsPerRoundTrip: s.NsPerRoundTrip, NsPerSwitch: s.NsPerSwitch}
}

func (x loadRun) Done() <-chan struct{} { return x.r.Done() }
