package exporter

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// modelHot is what the monitor shows of a Snapshot: the hot threads of
// each process group (model.ProcessGroup, the rule of g).
func modelHot(snap *model.Snapshot) map[string]int {
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

// TestHotAgreesWithModel feeds the exporter the model's Snapshot of two
// samples: every process group has the hot threads the monitor shows in
// it. The cases are the seams they disagreed on while the exporter judged
// threads itself: processes worker-1 and worker-2 (one group in the
// monitor, two series before), and a thread read at different points of a
// long pass (the model takes each thread's rate over its own span between
// its reads).
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
	snap := model.Compute(prev, cur, model.Options{HotThreshold: 1000})
	want := modelHot(&snap)
	if diff := cmp.Diff(map[string]int{"worker-*": 2, "late": 1}, want); diff != "" {
		t.Fatalf("the model's hot threads (-want +got):\n%s", diff)
	}
	a := newAccounts(false, 200)
	a.update(prev.Tasks, nil)
	a.update(cur.Tasks, &snap)
	if diff := cmp.Diff(want, exporterHot(a)); diff != "" {
		t.Errorf("hot threads per group, model vs exporter (-want +got):\n%s", diff)
	}
}

// A pass that ends no Snapshot (sooner than the pipeline's minimum
// interval after the last) moves the counters, and the hot verdicts
// stand until the next Snapshot.
func TestHotVerdictsStandWithoutASnapshot(t *testing.T) {
	a := newAccounts(false, 200)
	p := &passes{a: a, hot: 1000}
	p.next([]model.TaskCounters{task(10, 10, "a", "a", 0, 0)})
	p.next([]model.TaskCounters{task(10, 10, "a", "a", 1200, 0)})
	if got := a.procs["a"].hot; got != 1 {
		t.Fatalf("after 1,200 switches in a second: %d hot threads, want 1", got)
	}
	a.update([]model.TaskCounters{task(10, 10, "a", "a", 1201, 0)}, nil)
	if got := a.procs["a"].hot; got != 1 {
		t.Errorf("after a pass with no Snapshot: %d hot threads, want the 1 of the last Snapshot", got)
	}
	if got := series(a)["a"]; got != 1201 {
		t.Errorf("counter = %d, want 1201: every pass moves the counters", got)
	}
}

// A real ping-pong's two threads are hot from the second scrape a minimum
// interval after the first, by the Snapshot the pipeline derived; a
// scrape past the cache window but sooner than the minimum interval
// after that moves the counters and keeps the verdicts.
func TestPingPongHotThroughThePipeline(t *testing.T) {
	pid, _ := testutil.StartPingPong(t)
	cfg := sampling(sampler.Config{PIDs: []int{pid}, HotThreshold: 200})
	cfg.GroupBy = GroupByPID
	// 1.2 s apart at the least, so the 600 ms past the cache window a
	// scrape comes sooner than that.
	cfg.Source.Interval = 2400 * time.Millisecond
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	group := strconv.Itoa(pid)
	scrape := func() (hot, switches float64) {
		t.Helper()
		fams := gather(t, e)
		hot, _ = value(fams, "ctxtop_process_hot_threads", "group", group)
		for _, typ := range []string{"voluntary", "involuntary"} {
			v, _ := value(fams, "ctxtop_process_context_switches_total", "group", group, "type", typ)
			switches += v
		}
		return hot, switches
	}
	if hot, _ := scrape(); hot != 0 {
		t.Errorf("first scrape: %v hot threads, want 0 (no interval yet)", hot)
	}
	time.Sleep(1300 * time.Millisecond)
	judged, before := scrape()
	// The Go runtime's own threads may switch as often as the two sides.
	if judged < 2 {
		t.Errorf("after 1.3 s: %v hot threads, want pp-ping and pp-pong at the least", judged)
	}
	time.Sleep(CacheWindow + 100*time.Millisecond)
	start := time.Now()
	hot, after := scrape()
	if d := time.Since(start); d > time.Second {
		t.Errorf("a scrape sooner than the minimum interval took %v: it waited", d)
	}
	if hot != judged {
		t.Errorf("a scrape 600 ms later: %v hot threads, want the %v of the last Snapshot to stand", hot, judged)
	}
	if after <= before {
		t.Errorf("a scrape 600 ms later: switches went from %v to %v, want the counters moved", before, after)
	}
	if n := e.Samples(); n != 3 {
		t.Errorf("%d passes, want 3", n)
	}
}
