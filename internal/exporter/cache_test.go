package exporter

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

// served is what collectGroups sends, keyed by metric name and labels.
func served(t *testing.T, e *Exporter) map[string]float64 {
	t.Helper()
	m := map[string]float64{}
	for _, metric := range e.collectGroups(nil) {
		k := metric.Desc.Name()
		for i, l := range metric.Desc.Labels() {
			k += "," + l + "=" + metric.Labels[i]
		}
		if _, dup := m[k]; dup {
			t.Errorf("%s served twice", k)
		}
		m[k] = metric.Value
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

// A group's series are built once, with their labels, and every scrape
// serves their values afresh: one whose thread moved, exited or turned hot
// is never served stale.
func TestCachedSeriesFollowEveryChange(t *testing.T) {
	a := newAccounts(false, 200)
	p := &passes{a: a, hot: 1000}
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
		hot   float64 // busy's hot threads
	}{
		{"first", busy(100, false), 0},
		{"nothing moved", busy(100, false), 0},
		{"one thread of busy moved", busy(150, false), 0},
		{"it turned hot", busy(2000, false), 1},
		{"it went quiet", busy(2000, false), 0},
		{"it exited with its counts", busy(2000, true), 0},
	}
	var idleLabels *string
	for _, s := range steps {
		p.next(s.tasks)
		got := served(t, e)
		if diff := cmp.Diff(fromAccounts(a), got); diff != "" {
			t.Errorf("%s: served series (-want +got):\n%s", s.name, diff)
		}
		if hot := got["ctxtop_process_hot_threads,group=busy"]; hot != s.hot {
			t.Errorf("%s: busy has %v hot threads, want %v", s.name, hot, s.hot)
		}
		l := &a.procs["idle"].series[0].Labels[0]
		if idleLabels != nil && l != idleLabels {
			t.Errorf("%s: the idle group's series were rebuilt, want them built once", s.name)
		}
		idleLabels = l
	}
	if got := served(t, e)["ctxtop_process_context_switches_total,group=busy,type=voluntary"]; got != 2003 {
		t.Errorf("busy voluntary switches after its thread exited = %v, want 2003", got)
	}
}
