package exporter

import (
	"slices"
	"strings"

	"github.com/ctxtop/ctxtop/internal/exposition"
	"github.com/ctxtop/ctxtop/internal/model"
)

// Per-container series carry the labels cAdvisor and kube-state-metrics put
// on theirs, namespace, pod and container, so that a query joins them
// (`on (namespace, pod, container)`): container is the kubelet's container
// name for a pod's container, the runtime's name for one outside a pod, ""
// for a pod's own cgroup (as cAdvisor labels it); pod and namespace are ""
// outside a pod. A container whose name the node does not hold is labelled
// with its short ID.
//
// The series are bounded by MaxContainers: containers beyond it, busiest
// first admitted, are summed into container="other" (namespace and pod
// ""). A container gone (no thread left) gives its series up after
// ctrLinger samples, so a node's churn of pods does not grow the scrape.
var (
	ctrLabels             = []string{"container", "namespace", "pod"} // sorted, as exposition wants
	descContainerSwitches = newDesc("ctxtop_container_context_switches_total",
		"Context switches of every thread in the container's cgroup, including threads that exited or moved out while the exporter watched; type is voluntary or involuntary (/proc/PID/task/TID/status; the container from /proc/PID/cgroup, named from the node's files).",
		append(slices.Clone(ctrLabels), "type"))
	descContainerCPU = newDesc("ctxtop_container_cpu_seconds_total",
		"Time the container's threads ran on a CPU (/proc/PID/task/TID/schedstat field 1).", ctrLabels)
	descContainerWait = newDesc("ctxtop_container_run_queue_wait_seconds_total",
		"Time the container's threads were runnable but waited on a run queue (/proc/PID/task/TID/schedstat field 2).", ctrLabels)
	descContainerThreads = newDesc("ctxtop_container_threads",
		"Live threads in the container's cgroup (/proc/PID/task, /proc/PID/cgroup).", ctrLabels)
	levelContainer = []string{"container"}
)

// ctrLinger is how many samples a container's series outlive its last
// thread: its final sums are served a few more times, then it ends.
const ctrLinger = 8

type ctrKey struct{ namespace, pod, container string }

// ctrGroup is one container's sums, as group's are a process group's.
type ctrGroup struct {
	key        ctrKey
	target     *ctrGroup
	dead, live counts
	threads    int
	lastLive   uint64
	used       bool
	series     []exposition.Metric
}

func (g *ctrGroup) total() counts {
	c := g.dead
	c.add(g.live)
	return c
}

// ctrAccounts turn threads' cgroups into container counters that never
// decrease; the threads themselves are the accounts' tracked ones.
type ctrAccounts struct {
	max   int
	byKey map[ctrKey]*ctrGroup
	other *ctrGroup
	// exported counts the groups with series of their own.
	exported int
	dropped  int
	// last and lastC cache the lookup of a path in the sample's cgroups.
	last  string
	lastC *model.Container
}

func newCtrAccounts(max int) *ctrAccounts {
	c := &ctrAccounts{max: max, byKey: map[ctrKey]*ctrGroup{}}
	c.other = &ctrGroup{key: ctrKey{container: otherLabel}}
	c.other.target = c.other
	return c
}

func keyOf(c *model.Container) ctrKey {
	k := ctrKey{namespace: labelValue(c.Namespace), pod: labelValue(c.Pod)}
	if c.ID != "" {
		k.container = labelValue(c.Label())
	}
	return k
}

// containerOf is what runs in the cgroup at path, from the sample's sorted
// cgroups.
func (c *ctrAccounts) containerOf(cgs []model.CgroupCounters, path string) *model.Container {
	if path == "" {
		return nil
	}
	if path == c.last {
		return c.lastC
	}
	c.last, c.lastC = path, nil
	if i, ok := slices.BinarySearchFunc(cgs, path, func(x model.CgroupCounters, p string) int { return strings.Compare(x.Path, p) }); ok {
		c.lastC = cgs[i].Container
	}
	return c.lastC
}

// group is the container group of ctr, made (and admitted or sent to
// "other") when new.
func (c *ctrAccounts) group(ctr *model.Container, pass uint64) *ctrGroup {
	k := keyOf(ctr)
	g, ok := c.byKey[k]
	if !ok {
		g = &ctrGroup{key: k}
		if c.exported >= c.max {
			c.evict(pass)
		}
		if c.exported < c.max {
			g.target = g
			c.exported++
		} else {
			g.target = c.other
			c.dropped++
		}
		c.byKey[k] = g
	}
	g.lastLive = pass
	return g
}

// evict drops the group gone longest, if one lingered enough.
func (c *ctrAccounts) evict(pass uint64) {
	var victim *ctrGroup
	for _, g := range c.byKey {
		if g.target == g && g.threads == 0 && g.lastLive+ctrLinger < pass && (victim == nil || g.lastLive < victim.lastLive) {
			victim = g
		}
	}
	if victim != nil {
		delete(c.byKey, victim.key)
		c.exported--
	}
}

// forget drops groups whose last thread left more than ctrLinger samples
// ago, series and all.
func (c *ctrAccounts) forget(pass uint64) {
	for k, g := range c.byKey {
		if g.threads == 0 && g.lastLive+ctrLinger < pass {
			delete(c.byKey, k)
			if g.target == g {
				c.exported--
			} else {
				c.dropped--
			}
		}
	}
}

// ctrLeave moves what a thread did in its container to the container's
// dead sums: the thread exited, or moved to another cgroup.
func ctrLeave(t *thread) {
	if t.ctr == nil {
		return
	}
	g := t.ctr.target
	d := diff(t.last, t.cbase)
	g.live.sub(d)
	g.dead.add(d)
	g.threads--
	if t.ctr != g {
		t.ctr.threads--
	}
	t.ctr = nil
}

// updateContainers puts each tracked thread (in the order of tasks, as
// update leaves them) in its cgroup's container: a new thread from its
// base on, one whose cgroup changed from the last sample on. Threads
// outside any container are in none.
func (a *accounts) updateContainers(tasks []model.TaskCounters, cgs []model.CgroupCounters) {
	c := a.ctrs
	c.last, c.lastC = "", nil
	for i := range a.tracked {
		t, tc := &a.tracked[i], &tasks[i]
		if t.ctrSeen && t.cgroup == tc.Cgroup {
			if t.ctr != nil {
				t.ctr.lastLive = a.pass
			}
			continue
		}
		if !t.ctrSeen {
			t.cbase, t.ctrSeen = t.base, true
		} else {
			ctrLeave(t)
			t.cbase = t.last
		}
		t.cgroup = tc.Cgroup
		ctr := c.containerOf(cgs, tc.Cgroup)
		if ctr == nil {
			continue
		}
		g := c.group(ctr, a.pass)
		t.ctr = g
		tg := g.target
		tg.live.add(diff(t.last, t.cbase))
		tg.threads++
		if tg != g {
			g.threads++
		}
		tg.used = true
	}
	c.forget(a.pass)
}

func (g *ctrGroup) metrics() []exposition.Metric {
	if g.series == nil {
		k := []string{g.key.container, g.key.namespace, g.key.pod}
		g.series = []exposition.Metric{
			{Desc: descContainerSwitches, Labels: append(slices.Clone(k), voluntary[0])},
			{Desc: descContainerSwitches, Labels: append(slices.Clone(k), involuntary[0])},
			{Desc: descContainerCPU, Labels: k},
			{Desc: descContainerWait, Labels: k},
			{Desc: descContainerThreads, Labels: k},
		}
	}
	c := g.total()
	s := g.series
	s[0].Value, s[1].Value = float64(c.vol), float64(c.invol)
	s[2].Value, s[3].Value = float64(c.runNs)/1e9, float64(c.waitNs)/1e9
	s[4].Value = float64(g.threads)
	return s
}

func (e *Exporter) collectContainers(ms []exposition.Metric) []exposition.Metric {
	c := e.acc.ctrs
	if c == nil {
		return ms
	}
	for _, g := range c.byKey {
		if g.target == g {
			ms = append(ms, g.metrics()...)
		}
	}
	if c.other.used {
		ms = append(ms, c.other.metrics()...)
	}
	return append(ms,
		exposition.Metric{Desc: descSelfGroups, Value: float64(c.exported), Labels: levelContainer},
		exposition.Metric{Desc: descSelfDropped, Value: float64(c.dropped), Labels: levelContainer})
}
