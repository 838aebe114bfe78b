package tui

import "github.com/ctxtop/ctxtop/internal/load"

// loadLoader runs the workloads of package load inside this process.
type loadLoader struct{ cpus []int }

// NewLoader returns the Loader backed by ctxtop's own workloads.
func NewLoader() Loader {
	cpus, _ := load.AllowedCPUs()
	return loadLoader{cpus: cpus}
}

func (l loadLoader) Modes() []string {
	// Every mode, the syscall baseline too: that cs/s does not move while
	// it runs is the point it makes.
	var out []string
	for _, m := range load.Modes() {
		out = append(out, string(m))
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
	return LoadProgress{Elapsed: p.Elapsed, RoundTrips: p.RoundTrips, NsPerRoundTrip: p.NsPerRoundTrip, TIDs: p.TIDs, ChildPID: p.ChildPID}
}

func (x loadRun) Stop() LoadSummary {
	s := x.r.Stop()
	return LoadSummary{NsPerRoundTrip: s.NsPerRoundTrip, NsPerSwitch: s.NsPerSwitch}
}

func (x loadRun) Done() <-chan struct{} { return x.r.Done() }
