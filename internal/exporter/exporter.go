// Package exporter serves ctxtop's counters to Prometheus: host context
// switches, interrupts and rescheduling IPIs, and per process group and
// thread group switch counters summed over every thread (including threads
// that exited since the last scrape).
//
// It samples on scrape and keeps no timer of its own: between scrapes it
// sleeps. Each pass comes through the pipeline (pipeline.Scrapes): the
// counters it sums are the pass's raw Sample, its hot threads the verdicts
// of the Snapshot that pass ends. Scrapes within CacheWindow of the last
// sample are served that sample, so two Prometheus servers scraping at once
// cost one pass over /proc.
package exporter

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/ctxtop/ctxtop/internal/exposition"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
)

// CacheWindow is how long a sample answers further scrapes. Short next to
// any sane scrape interval (Prometheus allows 1 s at the least useful), long
// enough that scrapes arriving together share one pass over /proc.
const CacheWindow = 500 * time.Millisecond

// hotNominal is the refresh interval the hot rule's minimum interval is
// that of when Config.Source names none: the monitor's default, so a scrape
// never calls a thread hot over a shorter interval than the monitor would.
const hotNominal = time.Second

// GroupBy selects what a process group is.
type GroupBy string

const (
	// GroupByName groups processes by their name (comm), as process-exporter does.
	GroupByName GroupBy = "name"
	// GroupByPID makes each process its own group, for a few -p targets.
	GroupByPID GroupBy = "pid"
)

// Config selects what to sample and how to group it.
type Config struct {
	// Source is what each pass samples (its HotThreshold is the hot
	// rule's; with NoCgroups there are no container series) and the
	// nominal interval hot threads are judged over, hotNominal when 0.
	Source pipeline.ScrapeConfig
	// GroupBy is GroupByName (default) or GroupByPID.
	GroupBy GroupBy
	// MaxGroups bounds the series at each level (process groups, thread
	// groups); the rest are summed into "other". 0 means 200.
	MaxGroups int
	// MaxContainers bounds the per-container series (containers.go); 0
	// means 500.
	MaxContainers int
}

// Exporter collects the metrics of one scrape-driven source.
type Exporter struct {
	mu  sync.Mutex
	src *pipeline.Scrapes
	// smp is the last pass's raw Sample, the source's until its next pass.
	smp     *model.Sample
	acc     *accounts
	sampled time.Time // when the cached sample was taken; zero before the first
	took    time.Duration
	samples uint64
	err     error
	gone    bool // every -p target exited
	cpus    []string
	// window is CacheWindow; benchmarks set 0 to sample on every scrape.
	window time.Duration
}

// New opens the source. It does not sample: the first scrape does.
func New(cfg Config) (*Exporter, error) {
	switch cfg.GroupBy {
	case "", GroupByName, GroupByPID:
	default:
		return nil, fmt.Errorf("unknown --group-by %q: want name or pid", string(cfg.GroupBy))
	}
	if cfg.MaxGroups == 0 {
		cfg.MaxGroups = 200
	}
	if cfg.MaxGroups < 1 {
		return nil, fmt.Errorf("--max-groups must be at least 1, got %d", cfg.MaxGroups)
	}
	if cfg.MaxContainers == 0 {
		cfg.MaxContainers = 500
	}
	if cfg.MaxContainers < 1 {
		return nil, fmt.Errorf("--max-containers must be at least 1, got %d", cfg.MaxContainers)
	}
	if cfg.Source.Interval == 0 {
		cfg.Source.Interval = hotNominal
	}
	src, err := pipeline.NewScrapes(cfg.Source)
	if err != nil {
		return nil, err
	}
	acc := newAccounts(cfg.GroupBy == GroupByPID, cfg.MaxGroups)
	// The sampler reads cgroups only for the container series.
	if !cfg.Source.Sampler.NoCgroups {
		acc.ctrs = newCtrAccounts(cfg.MaxContainers)
	}
	return &Exporter{src: src, acc: acc, window: CacheWindow}, nil
}

// Skipped lists the source's PIDs already gone at New, which are not
// sampled.
func (e *Exporter) Skipped() []int { return e.src.Skipped() }

// Close releases the source's files.
func (e *Exporter) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.src.Close()
}

// refresh samples unless the cached sample is younger than CacheWindow.
// The caller holds e.mu.
func (e *Exporter) refresh() {
	if !e.sampled.IsZero() && time.Since(e.sampled) < e.window {
		return
	}
	start := time.Now()
	smp, snap, err := e.src.Next()
	if errors.Is(err, pipeline.ErrTargetsGone) {
		// Keep serving host counters and the groups' final sums: the
		// pass has no task.
		e.gone, err = true, nil
	}
	e.err = err
	if err != nil {
		return
	}
	e.smp = smp
	e.acc.update(e.smp.Tasks, snap)
	if e.acc.ctrs != nil {
		e.acc.updateContainers(e.smp.Tasks, e.smp.Cgroups)
	}
	e.sampled = e.smp.Time
	e.samples++
	e.took = time.Since(start)
	for len(e.cpus) < len(e.smp.System.ReschedPerCPU) {
		e.cpus = append(e.cpus, strconv.Itoa(len(e.cpus)))
	}
}

// ErrPartial marks an error after which Collect still appended every
// metric it could: the host's /proc/stat could not be read, so its series
// are missing from this scrape. It is served all the same and counted, as
// client_golang's promhttp does with ContinueOnError.
var ErrPartial = errors.New("some metrics are missing")

// Collect samples (or reuses a sample younger than CacheWindow) and appends
// every metric to ms. It fails when the pass over /proc did; an error that
// wraps ErrPartial comes with the metrics that could be read.
func (e *Exporter) Collect(ms []exposition.Metric) ([]exposition.Metric, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refresh()
	if e.err != nil {
		return ms, e.err
	}
	ms = e.collectHost(ms)
	ms = e.collectGroups(ms)
	ms = e.collectContainers(ms)
	ms = e.collectSelf(ms)
	if why := e.smp.System.Unread; why != "" {
		return ms, fmt.Errorf("%w: no host-wide counters this scrape: %s", ErrPartial, why)
	}
	return ms, nil
}

// Samples reports how many passes over /proc the exporter has made.
func (e *Exporter) Samples() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.samples
}
