package exporter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
)

// modelHot is what the monitor shows of samples: the hot threads of each
// process group (model.ProcessGroup, the rule of g), from model.Compute.
func modelHot(prev, cur *model.Sample, hot float64) map[string]int {
	snap := model.Compute(prev, cur, model.Options{HotThreshold: hot})
	m := map[string]int{}
	for _, th := range snap.Threads {
		if th.Hot {
			m[model.ProcessGroup(th.ProcessComm)]++
		}
	}
	return m
}

// exporterHot is ctxtop_process_hot_threads per group, zeros left out.
func exporterHot(a *accounts) map[string]int {
	m := map[string]int{}
	a.eachSeries(func(g *group) {
		if g.hot > 0 {
			m[g.key] = g.hot
		}
	}, func(*group) {})
	return m
}

// TestHotAgreesWithModel feeds the same samples to the model and the
// exporter: every process group has the same hot threads in both. The
// cases are the seams they disagreed on: processes worker-1 and worker-2
// (one group in the monitor, two series before), and threads read at
// different points of a long pass (the model takes each thread's rate over
// its own span between its reads; over the samples' interval, a thread read
// late in the first pass and early in the second looks slower).
func TestHotAgreesWithModel(t *testing.T) {
	at := func(tc model.TaskCounters, readAt time.Duration) model.TaskCounters {
		tc.ReadAt = readAt
		return tc
	}
	t0 := time.Unix(1000, 0)
	prev := &model.Sample{Time: t0, System: model.SystemCounters{CPUs: 2}, Tasks: []model.TaskCounters{
		task(10, 10, "worker-1", "worker-1", 0, 0),
		task(20, 20, "worker-2", "worker-2", 0, 0),
		// Read 400 ms into the first pass, at its start in the second:
		// 700 switches over its own 600 ms are 1,167/s, over the
		// samples' second 700/s.
		at(task(30, 30, "late", "late", 0, 0), 400*time.Millisecond),
		task(40, 40, "cold", "cold", 0, 0),
	}}
	cur := &model.Sample{Time: t0.Add(time.Second), System: model.SystemCounters{CPUs: 2}, Tasks: []model.TaskCounters{
		task(10, 10, "worker-1", "worker-1", 1500, 0),
		task(20, 20, "worker-2", "worker-2", 900, 300),
		task(30, 30, "late", "late", 700, 0),
		task(40, 40, "cold", "cold", 999, 0),
	}}
	a := newAccounts(false, 200, 1000)
	a.minInterval = pipeline.MinInterval(time.Second)
	a.update(prev.Tasks, 0)
	a.update(cur.Tasks, cur.Time.Sub(prev.Time))
	want := modelHot(prev, cur, 1000)
	if diff := cmp.Diff(map[string]int{"worker-*": 2, "late": 1}, want); diff != "" {
		t.Fatalf("the model's hot threads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, exporterHot(a)); diff != "" {
		t.Errorf("hot threads per group, model vs exporter (-want +got):\n%s", diff)
	}
}

// TestHotNotJudgedOverTooShortAnInterval: a sample sooner than
// pipeline.MinInterval after the last judged one leaves the verdicts as
// they were, and the next is over the whole time since the judged one, as
// the pipeline drops a too-close sample and keeps its base.
func TestHotNotJudgedOverTooShortAnInterval(t *testing.T) {
	a := newAccounts(false, 200, 1000)
	a.minInterval = pipeline.MinInterval(time.Second)
	a.update([]model.TaskCounters{task(10, 10, "a", "a", 0, 0)}, 0)
	// 20 switches in 10 ms would be 2,000/s.
	a.update([]model.TaskCounters{task(10, 10, "a", "a", 20, 0)}, 10*time.Millisecond)
	if got := a.procs["a"].hot; got != 0 {
		t.Errorf("after 10 ms: %d hot threads, want 0 (too short an interval to judge)", got)
	}
	// 20+1,200 over the 1.01 s since the judged sample: 1,208/s.
	a.update([]model.TaskCounters{task(10, 10, "a", "a", 1220, 0)}, time.Second)
	if got := a.procs["a"].hot; got != 1 {
		t.Errorf("after 1.01 s: %d hot threads, want 1", got)
	}
	if got := series(a)["a"]; got != 1220 {
		t.Errorf("counter = %d, want 1220: every sample moves the counters", got)
	}
}
