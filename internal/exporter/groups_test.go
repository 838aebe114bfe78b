package exporter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

func task(pid, tid int, comm, pcomm string, vol, invol uint64) model.TaskCounters {
	return model.TaskCounters{PID: pid, TID: tid, StartTime: uint64(tid), Comm: comm, ProcessComm: pcomm,
		VoluntarySwitches: vol, InvoluntarySwitches: invol, RunNs: 10 * vol, WaitNs: invol}
}

// series is what the exporter would serve: switches (voluntary+involuntary)
// per process group ("app") and per thread group ("app|pool-*").
func series(a *accounts) map[string]uint64 {
	m := map[string]uint64{}
	add := func(k string, g *group) {
		if _, dup := m[k]; dup {
			panic("duplicate series " + k)
		}
		c := g.total()
		m[k] = c.vol + c.invol
	}
	a.eachSeries(func(g *group) { add(g.key, g) }, func(g *group) { add(g.proc.key+"|"+g.key, g) })
	return m
}

func TestExitedThreadKeepsItsCounts(t *testing.T) {
	a := newAccounts(false, 200)
	a.update([]model.TaskCounters{
		task(10, 10, "app", "app", 5, 0),
		task(10, 11, "pool-1-thread-1", "app", 1000, 200),
		task(10, 12, "pool-1-thread-2", "app", 500, 0),
	}, nil)
	// pool-1-thread-1 exits, busy to the end; its sibling carries on.
	a.update([]model.TaskCounters{
		task(10, 10, "app", "app", 5, 0),
		task(10, 12, "pool-1-thread-2", "app", 600, 0),
	}, nil)
	want := map[string]uint64{"app": 5 + 1200 + 600, "app|app": 5, "app|pool-*-thread-*": 1200 + 600}
	if diff := cmp.Diff(want, series(a)); diff != "" {
		t.Errorf("after a busy thread exited (-want +got):\n%s", diff)
	}
	if g := a.procs["app"]; g.threads != 2 {
		t.Errorf("app has %d live threads, want 2", g.threads)
	}
}

func TestRenamedThreadMovesWithoutLosingCounts(t *testing.T) {
	a := newAccounts(false, 200)
	// A pool thread starts with its process's name, then names itself.
	a.update([]model.TaskCounters{task(10, 10, "java", "java", 1, 0), task(10, 11, "java", "java", 40, 0)}, nil)
	a.update([]model.TaskCounters{task(10, 10, "java", "java", 1, 0), task(10, 11, "pool-2-thread-9", "java", 100, 5)}, nil)
	want := map[string]uint64{"java": 1 + 105, "java|java": 1 + 40, "java|pool-*-thread-*": 65}
	if diff := cmp.Diff(want, series(a)); diff != "" {
		t.Errorf("after a rename (-want +got):\n%s", diff)
	}
}

func TestReusedTIDIsANewThread(t *testing.T) {
	a := newAccounts(false, 200)
	a.update([]model.TaskCounters{task(10, 11, "w", "app", 300, 0)}, nil)
	reborn := task(10, 11, "w", "app", 7, 0)
	reborn.StartTime = 99
	a.update([]model.TaskCounters{reborn}, nil)
	if diff := cmp.Diff(map[string]uint64{"app": 307, "app|w": 307}, series(a)); diff != "" {
		t.Errorf("after TID reuse (-want +got):\n%s", diff)
	}
}

func TestMaxGroupsSumsTheRestIntoOther(t *testing.T) {
	a := newAccounts(false, 2)
	a.update([]model.TaskCounters{
		task(10, 10, "busy", "busy", 900, 0),
		task(20, 20, "quiet", "quiet", 3, 0),
		task(30, 30, "mid", "mid", 50, 0),
	}, nil)
	want := map[string]uint64{"busy": 900, "busy|busy": 900, "mid": 50, "mid|mid": 50, "other": 3, "other|other": 3}
	if diff := cmp.Diff(want, series(a)); diff != "" {
		t.Errorf("first sample: busiest two get series (-want +got):\n%s", diff)
	}
	if p, _ := a.dropped(); p != 1 {
		t.Errorf("dropped process groups = %d, want 1", p)
	}

	// quiet exits; a new name arrives while both series are held.
	a.update([]model.TaskCounters{
		task(10, 10, "busy", "busy", 910, 0),
		task(30, 30, "mid", "mid", 50, 0),
		task(40, 40, "new", "new", 8, 0),
	}, nil)
	want = map[string]uint64{"busy": 910, "busy|busy": 910, "mid": 50, "mid|mid": 50, "other": 3 + 8, "other|other": 3 + 8}
	if diff := cmp.Diff(want, series(a)); diff != "" {
		t.Errorf("other keeps an exited member's counts (-want +got):\n%s", diff)
	}

	// mid exits: its series stays, constant, until another needs the slot.
	a.update([]model.TaskCounters{task(10, 10, "busy", "busy", 920, 0), task(40, 40, "new", "new", 9, 0)}, nil)
	if got := series(a)["mid"]; got != 50 {
		t.Errorf("mid after exit = %d, want 50 (kept)", got)
	}
	a.update([]model.TaskCounters{
		task(10, 10, "busy", "busy", 930, 0),
		task(40, 40, "new", "new", 10, 0),
		task(50, 50, "late", "late", 4, 0),
	}, nil)
	want = map[string]uint64{"busy": 930, "busy|busy": 930, "late": 4, "late|late": 4, "other": 3 + 10, "other|other": 3 + 10}
	if diff := cmp.Diff(want, series(a)); diff != "" {
		t.Errorf("late takes the slot mid left; new stays in other (-want +got):\n%s", diff)
	}
}

func TestThreadGroupsBeyondMaxGoToTheirProcessOther(t *testing.T) {
	a := newAccounts(false, 2)
	a.update([]model.TaskCounters{
		task(10, 10, "app", "app", 1, 0),
		task(10, 11, "gc", "app", 50, 0),
		task(10, 12, "io", "app", 7, 0),
	}, nil)
	want := map[string]uint64{"app": 58, "app|gc": 50, "app|io": 7, "app|other": 1}
	if diff := cmp.Diff(want, series(a)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestGroupByPID(t *testing.T) {
	a := newAccounts(true, 200)
	a.update([]model.TaskCounters{task(10, 10, "a", "a", 1, 0), task(20, 20, "a", "a", 2, 0)}, nil)
	// A process renamed by exec stays in its PID's group.
	a.update([]model.TaskCounters{task(10, 10, "a", "a", 1, 0), task(20, 20, "a", "b", 3, 0)}, nil)
	if diff := cmp.Diff(map[string]uint64{"10": 1, "10|a": 1, "20": 3, "20|a": 3}, series(a)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// passes feeds tasks to accounts as the pipeline does, one pass a
// second: each with the Snapshot the model derives over the second before
// it (none for the first).
type passes struct {
	a    *accounts
	hot  float64
	prev *model.Sample
}

func (p *passes) next(tasks []model.TaskCounters) *model.Snapshot {
	cur := &model.Sample{Time: time.Unix(1000, 0), Tasks: tasks}
	var snap *model.Snapshot
	if p.prev != nil {
		cur.Time = p.prev.Time.Add(time.Second)
		s := model.Compute(p.prev, cur, model.Options{HotThreshold: p.hot})
		snap = &s
	}
	p.a.update(tasks, snap)
	p.prev = cur
	return snap
}

// The hot threads of a group are those the Snapshot calls hot, a verdict
// that follows a thread renamed into another group and leaves with a
// thread that exits.
func TestHotThreads(t *testing.T) {
	a := newAccounts(false, 200)
	p := &passes{a: a, hot: 1000}
	p.next([]model.TaskCounters{task(10, 10, "a", "a", 0, 0), task(10, 11, "b", "a", 0, 0), task(20, 20, "c", "c", 0, 0)})
	p.next([]model.TaskCounters{task(10, 10, "a", "a", 1500, 600), task(10, 11, "b", "a", 900, 0), task(20, 20, "c", "c", 1000, 0)})
	if diff := cmp.Diff(map[string]int{"a": 1, "c": 1}, exporterHot(a)); diff != "" {
		t.Errorf("2,100/s and 1,000/s are hot, 900/s is not (-want +got):\n%s", diff)
	}
	// c's process renames itself d; a's hot thread goes quiet and b turns hot.
	p.next([]model.TaskCounters{task(10, 10, "a", "a", 1500, 600), task(10, 11, "b", "a", 2900, 0), task(20, 20, "c", "d", 3000, 0)})
	if diff := cmp.Diff(map[string]int{"a": 1, "d": 1}, exporterHot(a)); diff != "" {
		t.Errorf("after a rename and a change of hot thread (-want +got):\n%s", diff)
	}
	// b exits, hot to the end.
	p.next([]model.TaskCounters{task(10, 10, "a", "a", 1500, 600), task(20, 20, "c", "d", 3000, 0)})
	if diff := cmp.Diff(map[string]int{}, exporterHot(a)); diff != "" {
		t.Errorf("after the hot thread exited and d went quiet (-want +got):\n%s", diff)
	}
}

// TestRandomHistoriesKeepInvariants drives the accounts through random
// births, exits, renames and TID reuse with few series, and checks after
// every sample: no served counter went down, every process group equals the
// sum of its thread groups, and the exposition matches the sums.
func TestRandomHistoriesKeepInvariants(t *testing.T) {
	type live struct {
		pid, tid    int
		start       uint64
		comm, pcomm string
		vol, invol  uint64
	}
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"app", "db", "web", "cron", "sh", "kworker/0:1", "kworker/1:0"}
	tnames := []string{"main", "pool-1-thread-1", "pool-1-thread-2", "gc", "io-3", "timer"}
	for round := range 20 {
		a := newAccounts(round%3 == 0, 1+round%4)
		// 300/s: about half the threads that run are hot.
		p := &passes{a: a, hot: 300}
		e := &Exporter{acc: a}
		var tasks []live
		nextTID := 100
		prev := map[string]uint64{}
		for step := range 60 {
			// Mutate.
			for i := 0; i < len(tasks); i++ {
				tk := &tasks[i]
				switch r := rng.IntN(20); {
				case r == 0:
					tasks = slices.Delete(tasks, i, i+1) // exit
					i--
					continue
				case r == 1:
					tk.comm = tnames[rng.IntN(len(tnames))]
				case r == 2:
					tk.start += 1000 // TID reused
					tk.vol, tk.invol = 0, 0
				}
				if tk.pid%20 == 1 && step%5 != 0 {
					continue // processes 1, 21, 41 are mostly asleep
				}
				tk.vol += uint64(rng.IntN(500))
				tk.invol += uint64(rng.IntN(50))
			}
			for range rng.IntN(4) {
				pid := 1 + rng.IntN(6)*10
				pcomm := names[rng.IntN(len(names))]
				for _, tk := range tasks {
					if tk.pid == pid {
						pcomm = tk.pcomm
					}
				}
				nextTID++
				tasks = append(tasks, live{pid: pid, tid: nextTID, start: uint64(nextTID), comm: tnames[rng.IntN(len(tnames))], pcomm: pcomm, vol: uint64(rng.IntN(100))})
			}
			slices.SortFunc(tasks, func(x, y live) int {
				if x.pid != y.pid {
					return x.pid - y.pid
				}
				return x.tid - y.tid
			})
			var smp []model.TaskCounters
			for _, tk := range tasks {
				smp = append(smp, model.TaskCounters{PID: tk.pid, TID: tk.tid, StartTime: tk.start, Comm: tk.comm, ProcessComm: tk.pcomm,
					VoluntarySwitches: tk.vol, InvoluntarySwitches: tk.invol})
			}
			snap := p.next(smp)

			got := series(a)
			for k, v := range got {
				if p, ok := prev[k]; ok && v < p {
					t.Fatalf("round %d step %d: %s went from %d to %d", round, step, k, p, v)
				}
			}
			prev = got
			// What is served (cached for groups that did not move) is
			// what the accounts hold now.
			if diff := cmp.Diff(fromAccounts(a), served(t, e)); diff != "" {
				t.Fatalf("round %d step %d: served series (-want +got):\n%s", round, step, diff)
			}
			sums := map[string]uint64{}
			for k, v := range got {
				for i := 0; i < len(k); i++ {
					if k[i] == '|' {
						// A thread series: "proc|thread".
						sums[k[:i]] += v
						break
					}
				}
			}
			for k, v := range got {
				if s, ok := sums[k]; ok && s != v {
					t.Fatalf("round %d step %d: process group %s = %d, its thread groups sum to %d", round, step, k, v, s)
				}
			}
			// Every hot thread the model found is counted once, in the
			// series its process group sums into.
			if snap != nil {
				want, got := 0, 0
				for _, r := range snap.Threads {
					if r.Hot {
						want++
					}
				}
				a.eachSeries(func(g *group) { got += g.hot }, func(*group) {})
				if got != want {
					t.Fatalf("round %d step %d: %d hot threads served, the Snapshot has %d", round, step, got, want)
				}
			}
			if np, nt := a.exportedProcs, a.exportedThreads; np > a.maxGroups || nt > a.maxGroups {
				t.Fatalf("round %d step %d: %d process and %d thread series, max %d", round, step, np, nt, a.maxGroups)
			}
			dp, dt := 0, 0
			for _, g := range a.procs {
				if !g.exported {
					dp++
				}
			}
			for _, g := range a.threads {
				if !g.exported {
					dt++
				}
			}
			if gp, gt := a.dropped(); gp != dp || gt != dt {
				t.Fatalf("round %d step %d: dropped %d and %d, groups without a series %d and %d", round, step, gp, gt, dp, dt)
			}
		}
	}
}

// BenchmarkUpdate10kThreads is the group accounting alone: 10,000 threads
// in 100 thread groups of one process, a tenth of them switching each pass.
func BenchmarkUpdate10kThreads(b *testing.B) {
	tasks := make([]model.TaskCounters, 0, 10000)
	for i := range 10000 {
		tasks = append(tasks, task(100, 100+i, fmt.Sprintf("pool-%c%c-%d", 'a'+i/100%26, 'a'+i/2600, i%100), "app", 10, 1))
	}
	a := newAccounts(false, 200)
	a.update(tasks, nil)
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		for j := i % 10; j < len(tasks); j += 10 {
			tasks[j].VoluntarySwitches++
		}
		c0 := cpuTime()
		a.update(tasks, nil)
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/update")
}

// The README's worst case: with M = --max-groups, at most 6(M+1) process
// series and 3(2M+1) thread-group series, however many names the host has.
func TestWorstCaseSeries(t *testing.T) {
	const m = 4
	a := newAccounts(false, m)
	var tasks []model.TaskCounters
	tid := 1000
	for p := range 3 * m {
		pid := 100 + p
		pname := fmt.Sprintf("proc%c", 'a'+p)
		for th := range 3 * m {
			tid++
			tasks = append(tasks, task(pid, tid, fmt.Sprintf("thr%c", 'a'+th), pname, uint64(p*100+th), 0))
		}
	}
	a.update(tasks, nil)
	e := &Exporter{acc: a}
	procs, threads := 0, 0
	for _, m := range e.collectGroups(nil) {
		switch m.Desc {
		case descGroupSwitches, descGroupCPU, descGroupWait, descGroupThreads, descGroupHot:
			procs++
		case descThreadSwitches, descThreadThreads:
			threads++
		}
	}
	if diff := cmp.Diff([2]int{6 * (m + 1), 3 * (2*m + 1)}, [2]int{procs, threads}); diff != "" {
		t.Errorf("series [process, thread group] (-want +got):\n%s", diff)
	}
	if p, th := a.dropped(); p != 2*m || th != m*(3*m-1) {
		t.Errorf("dropped: %d process groups, %d thread groups; want %d, %d", p, th, 2*m, m*(3*m-1))
	}
}
