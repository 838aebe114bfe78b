package exporter

import (
	"strings"

	"github.com/ctxtop/ctxtop/internal/exposition"
)

// Metric names follow the Prometheus conventions: ctxtop_ prefix, base units,
// _total on counters. Each HELP names the /proc file the value comes from.
var (
	descContextSwitches = newDesc("ctxtop_context_switches_total",
		"Context switches on all CPUs since boot (/proc/stat ctxt).", nil)
	descInterrupts = newDesc("ctxtop_interrupts_total",
		"Interrupts serviced on all CPUs since boot (/proc/stat intr, first field).", nil)
	descReschedIPIs = newDesc("ctxtop_rescheduling_ipis_total",
		"Rescheduling inter-processor interrupts received by the CPU since boot: another CPU asked it to reschedule, usually a cross-CPU wake-up (/proc/interrupts RES).",
		[]string{"cpu"})
	descCPUs = newDesc("ctxtop_cpus",
		"Online CPUs (columns of /proc/interrupts, else cpuN lines of /proc/stat).", nil)
	descProcsRunning = newDesc("ctxtop_procs_running",
		"Runnable tasks now (/proc/stat procs_running).", nil)
	descProcsBlocked = newDesc("ctxtop_procs_blocked",
		"Tasks in uninterruptible sleep now (/proc/stat procs_blocked).", nil)
	descPSISome = newDesc("ctxtop_pressure_cpu_some_seconds_total",
		"Time in which at least one runnable task waited for a CPU, since boot (/proc/pressure/cpu some total=, microseconds).", nil)

	descGroupSwitches = newDesc("ctxtop_process_context_switches_total",
		"Context switches of every thread of the processes in the group, including threads that exited while the exporter watched; type is voluntary (blocked) or involuntary (preempted) (/proc/PID/task/TID/status voluntary_ctxt_switches, nonvoluntary_ctxt_switches).",
		[]string{"group", "type"})
	descGroupCPU = newDesc("ctxtop_process_cpu_seconds_total",
		"Time the group's threads ran on a CPU (/proc/PID/task/TID/schedstat field 1).", []string{"group"})
	descGroupWait = newDesc("ctxtop_process_run_queue_wait_seconds_total",
		"Time the group's threads were runnable but waited on a run queue (/proc/PID/task/TID/schedstat field 2).", []string{"group"})
	descGroupThreads = newDesc("ctxtop_process_threads",
		"Live threads in the group's processes (directories of /proc/PID/task).", []string{"group"})
	descGroupHot = newDesc("ctxtop_process_hot_threads",
		"Threads of the group that switched at or above --hot per second between the last two samples (/proc/PID/task/TID/status).", []string{"group"})

	descThreadSwitches = newDesc("ctxtop_thread_group_context_switches_total",
		"Context switches of the threads named alike (digits collapsed: pool-1-thread-7 is pool-*-thread-*) within a process group, including exited threads (/proc/PID/task/TID/status voluntary_ctxt_switches, nonvoluntary_ctxt_switches; names from /proc/PID/task/TID/comm).",
		[]string{"group", "thread_group", "type"})
	descThreadThreads = newDesc("ctxtop_thread_group_threads",
		"Live threads in the thread group (/proc/PID/task/TID/comm).", []string{"group", "thread_group"})

	descSelfDuration = newDesc("ctxtop_exporter_scrape_duration_seconds",
		"Wall time of the last pass over /proc and the summing into groups.", nil)
	descSelfSamples = newDesc("ctxtop_exporter_samples_total",
		"Passes over /proc; scrapes within the cache window of the last one reuse it.", nil)
	descSelfTasks = newDesc("ctxtop_exporter_tasks_read",
		"Threads read in the last pass (/proc/PID/task/TID).", nil)
	descSelfUnreadable = newDesc("ctxtop_exporter_tasks_unreadable",
		"Threads that exist but could not be read in the last pass: other users' tasks without the privilege to read them.", nil)
	descSelfCPU = newDesc("ctxtop_exporter_cpu_seconds_total",
		"CPU time (user and system) of the exporter itself (getrusage RUSAGE_SELF).", nil)
	descSelfSwitches = newDesc("ctxtop_exporter_context_switches_total",
		"Context switches of the exporter's own threads (getrusage RUSAGE_SELF ru_nvcsw, ru_nivcsw).", []string{"type"})
	descSelfGroups = newDesc("ctxtop_exporter_groups",
		"Groups with a series of their own, per level (process or thread); at most --max-groups each.", []string{"level"})
	descSelfDropped = newDesc("ctxtop_exporter_groups_dropped",
		"Groups beyond --max-groups, summed into the group or thread_group \"other\", per level.", []string{"level"})
)

// newDesc describes a family; a name ending in _total is a counter and any
// other a gauge, the naming rule every metric here follows.
func newDesc(name, help string, labels []string) *exposition.Desc {
	typ := exposition.Gauge
	if strings.HasSuffix(name, "_total") {
		typ = exposition.Counter
	}
	return exposition.NewDesc(name, help, typ, labels...)
}

func metric(d *exposition.Desc, v float64, labels ...string) exposition.Metric {
	return exposition.Metric{Desc: d, Value: v, Labels: labels}
}

func (e *Exporter) collectHost(ms []exposition.Metric) []exposition.Metric {
	sys := &e.smp.System
	if sys.Unread == "" {
		// A /proc/stat that could not be read leaves a gap in its series:
		// a 0 would be a counter reset to Prometheus, and the climb back
		// to the kernel's count one interval's increase.
		ms = append(ms, metric(descContextSwitches, float64(sys.ContextSwitches)),
			metric(descInterrupts, float64(sys.Interrupts)))
	}
	for i, v := range sys.ReschedPerCPU {
		ms = append(ms, exposition.Metric{Desc: descReschedIPIs, Value: float64(v), Labels: e.cpus[i : i+1 : i+1]})
	}
	if sys.Unread == "" || sys.CPUs > 0 {
		ms = append(ms, metric(descCPUs, float64(sys.CPUs)))
	}
	if sys.Unread == "" {
		ms = append(ms, metric(descProcsRunning, float64(sys.ProcsRunning)),
			metric(descProcsBlocked, float64(sys.ProcsBlocked)))
	}
	if sys.HasPSITotal {
		ms = append(ms, metric(descPSISome, float64(sys.PSICPUSomeTotalUs)/1e6))
	}
	return ms
}

// A group's labels never change while it exists (its key is its label, and
// a thread group's process group is fixed), so its series are built once,
// with their label values, and a scrape only sets their values.
var (
	voluntary   = []string{"voluntary"}
	involuntary = []string{"involuntary"}
)

func (g *group) procMetrics() []exposition.Metric {
	if g.series == nil {
		k := []string{g.key}
		g.series = []exposition.Metric{
			{Desc: descGroupSwitches, Labels: []string{g.key, voluntary[0]}},
			{Desc: descGroupSwitches, Labels: []string{g.key, involuntary[0]}},
			{Desc: descGroupCPU, Labels: k},
			{Desc: descGroupWait, Labels: k},
			{Desc: descGroupThreads, Labels: k},
			{Desc: descGroupHot, Labels: k},
		}
	}
	c := g.total()
	s := g.series
	s[0].Value, s[1].Value = float64(c.vol), float64(c.invol)
	s[2].Value, s[3].Value = float64(c.runNs)/1e9, float64(c.waitNs)/1e9
	s[4].Value, s[5].Value = float64(g.threads), float64(g.hot)
	return s
}

func (g *group) threadMetrics() []exposition.Metric {
	if g.series == nil {
		g.series = []exposition.Metric{
			{Desc: descThreadSwitches, Labels: []string{g.proc.key, g.key, voluntary[0]}},
			{Desc: descThreadSwitches, Labels: []string{g.proc.key, g.key, involuntary[0]}},
			{Desc: descThreadThreads, Labels: []string{g.proc.key, g.key}},
		}
	}
	c := g.total()
	s := g.series
	s[0].Value, s[1].Value, s[2].Value = float64(c.vol), float64(c.invol), float64(g.threads)
	return s
}

func (e *Exporter) collectGroups(ms []exposition.Metric) []exposition.Metric {
	e.acc.eachSeries(
		func(g *group) { ms = append(ms, g.procMetrics()...) },
		func(g *group) { ms = append(ms, g.threadMetrics()...) })
	return ms
}

func (e *Exporter) collectSelf(ms []exposition.Metric) []exposition.Metric {
	self := e.smp.Self
	dp, dt := e.acc.dropped()
	return append(ms,
		metric(descSelfDuration, e.took.Seconds()),
		metric(descSelfSamples, float64(e.samples)),
		metric(descSelfTasks, float64(len(e.smp.Tasks))),
		metric(descSelfUnreadable, float64(e.smp.Unreadable)),
		metric(descSelfCPU, self.CPUTime.Seconds()),
		exposition.Metric{Desc: descSelfSwitches, Value: float64(self.VoluntarySwitches), Labels: voluntary},
		exposition.Metric{Desc: descSelfSwitches, Value: float64(self.InvoluntarySwitches), Labels: involuntary},
		exposition.Metric{Desc: descSelfGroups, Value: float64(e.acc.exportedProcs), Labels: levelProcess},
		exposition.Metric{Desc: descSelfGroups, Value: float64(e.acc.exportedThreads), Labels: levelThread},
		exposition.Metric{Desc: descSelfDropped, Value: float64(dp), Labels: levelProcess},
		exposition.Metric{Desc: descSelfDropped, Value: float64(dt), Labels: levelThread})
}

var (
	levelProcess = []string{"process"}
	levelThread  = []string{"thread"}
)
