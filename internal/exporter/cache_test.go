package exporter

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ctxtop/ctxtop/internal/model"
)

// served is what collectGroups sends, keyed by metric name and labels.
func served(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 4096)
	e.collectGroups(ch)
	close(ch)
	m := map[string]float64{}
	for metric := range ch {
		var d dto.Metric
		if err := metric.Write(&d); err != nil {
			t.Fatal(err)
		}
		k := metric.Desc().String()
		k = k[strings.Index(k, `fqName: "`)+9:]
		k = k[:strings.IndexByte(k, '"')]
		for _, l := range d.Label {
			k += "," + l.GetName() + "=" + l.GetValue()
		}
		if d.Counter != nil {
			m[k] = d.Counter.GetValue()
		} else {
			m[k] = d.Gauge.GetValue()
		}
	}
	return m
}

// fromAccounts is what collectGroups must send, computed from the accounts
// afresh.
func fromAccounts(a *accounts) map[string]float64 {
	m := map[string]float64{}
	proc := func(g *group) {
		c := g.total()
		m["ctxtop_process_context_switches_total,group="+g.key+",type=voluntary"] = float64(c.vol)
		m["ctxtop_process_context_switches_total,group="+g.key+",type=involuntary"] = float64(c.invol)
		m["ctxtop_process_cpu_seconds_total,group="+g.key] = float64(c.runNs) / 1e9
		m["ctxtop_process_run_queue_wait_seconds_total,group="+g.key] = float64(c.waitNs) / 1e9
		m["ctxtop_process_threads,group="+g.key] = float64(g.threads)
		m["ctxtop_process_hot_threads,group="+g.key] = float64(g.hot)
	}
	thread := func(g *group) {
		c := g.total()
		l := ",group=" + g.proc.key + ",thread_group=" + g.key
		m["ctxtop_thread_group_context_switches_total"+l+",type=voluntary"] = float64(c.vol)
		m["ctxtop_thread_group_context_switches_total"+l+",type=involuntary"] = float64(c.invol)
		m["ctxtop_thread_group_threads"+l] = float64(g.threads)
	}
	a.eachSeries(proc, thread)
	return m
}

// A group whose sums did not move is served its cached metrics; one whose
// thread moved, exited or turned hot must be served afresh, never stale.
func TestCachedSeriesFollowEveryChange(t *testing.T) {
	a := newAccounts(false, 200, 1000)
	e := &Exporter{acc: a}
	idle := []model.TaskCounters{task(10, 10, "main", "idle", 5, 1), task(10, 11, "pool-1", "idle", 7, 0)}
	busy := func(vol uint64, exited bool) []model.TaskCounters {
		ts := []model.TaskCounters{task(20, 20, "main", "busy", 3, 0)}
		if !exited {
			ts = append(ts, task(20, 21, "pool-1", "busy", vol, 0))
		}
		return append(slices.Clone(idle), ts...)
	}
	steps := []struct {
		name  string
		tasks []model.TaskCounters
	}{
		{"first", busy(100, false)},
		{"nothing moved", busy(100, false)},
		{"one thread of busy moved", busy(150, false)},
		{"it turned hot", busy(2000, false)},
		{"it went quiet", busy(2000, false)},
		{"it exited with its counts", busy(2000, true)},
	}
	var idleMetric prometheus.Metric
	for _, s := range steps {
		a.update(s.tasks, 1)
		got := served(t, e)
		if diff := cmp.Diff(fromAccounts(a), got); diff != "" {
			t.Errorf("%s: served series (-want +got):\n%s", s.name, diff)
		}
		m := a.procs["idle"].series.metrics[0]
		if idleMetric != nil && m != idleMetric {
			t.Errorf("%s: the idle group's metrics were rebuilt, want them served from the cache", s.name)
		}
		idleMetric = m
	}
	if got := served(t, e)["ctxtop_process_context_switches_total,group=busy,type=voluntary"]; got != 2003 {
		t.Errorf("busy voluntary switches after its thread exited = %v, want 2003", got)
	}
}
