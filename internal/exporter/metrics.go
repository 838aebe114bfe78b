package exporter

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metric names follow the Prometheus conventions: ctxtop_ prefix, base units,
// _total on counters. Each HELP names the /proc file the value comes from.
var (
	descContextSwitches = prometheus.NewDesc("ctxtop_context_switches_total",
		"Context switches on all CPUs since boot (/proc/stat ctxt).", nil, nil)
	descInterrupts = prometheus.NewDesc("ctxtop_interrupts_total",
		"Interrupts serviced on all CPUs since boot (/proc/stat intr, first field).", nil, nil)
	descReschedIPIs = prometheus.NewDesc("ctxtop_rescheduling_ipis_total",
		"Rescheduling inter-processor interrupts received by the CPU since boot: another CPU asked it to reschedule, usually a cross-CPU wake-up (/proc/interrupts RES).",
		[]string{"cpu"}, nil)
	descCPUs = prometheus.NewDesc("ctxtop_cpus",
		"Online CPUs (columns of /proc/interrupts, else cpuN lines of /proc/stat).", nil, nil)
	descProcsRunning = prometheus.NewDesc("ctxtop_procs_running",
		"Runnable tasks now (/proc/stat procs_running).", nil, nil)
	descProcsBlocked = prometheus.NewDesc("ctxtop_procs_blocked",
		"Tasks in uninterruptible sleep now (/proc/stat procs_blocked).", nil, nil)
	descPSISome = prometheus.NewDesc("ctxtop_pressure_cpu_some_seconds_total",
		"Time in which at least one runnable task waited for a CPU, since boot (/proc/pressure/cpu some total=, microseconds).", nil, nil)

	descGroupSwitches = prometheus.NewDesc("ctxtop_process_context_switches_total",
		"Context switches of every thread of the processes in the group, including threads that exited while the exporter watched; type is voluntary (blocked) or involuntary (preempted) (/proc/PID/task/TID/status voluntary_ctxt_switches, nonvoluntary_ctxt_switches).",
		[]string{"group", "type"}, nil)
	descGroupCPU = prometheus.NewDesc("ctxtop_process_cpu_seconds_total",
		"Time the group's threads ran on a CPU (/proc/PID/task/TID/schedstat field 1).", []string{"group"}, nil)
	descGroupWait = prometheus.NewDesc("ctxtop_process_run_queue_wait_seconds_total",
		"Time the group's threads were runnable but waited on a run queue (/proc/PID/task/TID/schedstat field 2).", []string{"group"}, nil)
	descGroupThreads = prometheus.NewDesc("ctxtop_process_threads",
		"Live threads in the group's processes (directories of /proc/PID/task).", []string{"group"}, nil)
	descGroupHot = prometheus.NewDesc("ctxtop_process_hot_threads",
		"Threads of the group that switched at or above --hot per second between the last two samples (/proc/PID/task/TID/status).", []string{"group"}, nil)

	descThreadSwitches = prometheus.NewDesc("ctxtop_thread_group_context_switches_total",
		"Context switches of the threads named alike (digits collapsed: pool-1-thread-7 is pool-*-thread-*) within a process group, including exited threads (/proc/PID/task/TID/status voluntary_ctxt_switches, nonvoluntary_ctxt_switches; names from /proc/PID/task/TID/comm).",
		[]string{"group", "thread_group", "type"}, nil)
	descThreadThreads = prometheus.NewDesc("ctxtop_thread_group_threads",
		"Live threads in the thread group (/proc/PID/task/TID/comm).", []string{"group", "thread_group"}, nil)

	descSelfDuration = prometheus.NewDesc("ctxtop_exporter_scrape_duration_seconds",
		"Wall time of the last pass over /proc and the summing into groups.", nil, nil)
	descSelfSamples = prometheus.NewDesc("ctxtop_exporter_samples_total",
		"Passes over /proc; scrapes within the cache window of the last one reuse it.", nil, nil)
	descSelfTasks = prometheus.NewDesc("ctxtop_exporter_tasks_read",
		"Threads read in the last pass (/proc/PID/task/TID).", nil, nil)
	descSelfUnreadable = prometheus.NewDesc("ctxtop_exporter_tasks_unreadable",
		"Threads that exist but could not be read in the last pass: other users' tasks without the privilege to read them.", nil, nil)
	descSelfCPU = prometheus.NewDesc("ctxtop_exporter_cpu_seconds_total",
		"CPU time (user and system) of the exporter itself (getrusage RUSAGE_SELF).", nil, nil)
	descSelfSwitches = prometheus.NewDesc("ctxtop_exporter_context_switches_total",
		"Context switches of the exporter's own threads (getrusage RUSAGE_SELF ru_nvcsw, ru_nivcsw).", []string{"type"}, nil)
	descSelfGroups = prometheus.NewDesc("ctxtop_exporter_groups",
		"Groups with a series of their own, per level (process or thread); at most --max-groups each.", []string{"level"}, nil)
	descSelfDropped = prometheus.NewDesc("ctxtop_exporter_groups_dropped",
		"Groups beyond --max-groups, summed into the group or thread_group \"other\", per level.", []string{"level"}, nil)

	allDescs = []*prometheus.Desc{
		descContextSwitches, descInterrupts, descReschedIPIs, descCPUs, descProcsRunning, descProcsBlocked, descPSISome,
		descGroupSwitches, descGroupCPU, descGroupWait, descGroupThreads, descGroupHot,
		descThreadSwitches, descThreadThreads,
		descSelfDuration, descSelfSamples, descSelfTasks, descSelfUnreadable, descSelfCPU, descSelfSwitches, descSelfGroups, descSelfDropped,
	}
)

const (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
)

func (e *Exporter) collectHost(ch chan<- prometheus.Metric) {
	sys := &e.smp.System
	ch <- prometheus.MustNewConstMetric(descContextSwitches, counter, float64(sys.ContextSwitches))
	ch <- prometheus.MustNewConstMetric(descInterrupts, counter, float64(sys.Interrupts))
	for i, v := range sys.ReschedPerCPU {
		ch <- prometheus.MustNewConstMetric(descReschedIPIs, counter, float64(v), e.cpus[i])
	}
	ch <- prometheus.MustNewConstMetric(descCPUs, gauge, float64(sys.CPUs))
	ch <- prometheus.MustNewConstMetric(descProcsRunning, gauge, float64(sys.ProcsRunning))
	ch <- prometheus.MustNewConstMetric(descProcsBlocked, gauge, float64(sys.ProcsBlocked))
	if sys.HasPSITotal {
		ch <- prometheus.MustNewConstMetric(descPSISome, counter, float64(sys.PSICPUSomeTotalUs)/1e6)
	}
}

// seriesCache holds a group's metrics as last built, and what from.
type seriesCache struct {
	valid        bool
	c            counts
	threads, hot int
	metrics      []prometheus.Metric
}

// fresh reports whether the cached metrics were built from these values;
// if not, it records them and empties the cache for rebuilding.
func (s *seriesCache) fresh(c counts, threads, hot int) bool {
	if s.valid && s.c == c && s.threads == threads && s.hot == hot {
		return true
	}
	s.valid, s.c, s.threads, s.hot = true, c, threads, hot
	clear(s.metrics)
	s.metrics = s.metrics[:0]
	return false
}

func (e *Exporter) collectGroups(ch chan<- prometheus.Metric) {
	a := e.acc
	send := func(ms []prometheus.Metric) {
		for _, m := range ms {
			ch <- m
		}
	}
	// A group's labels never change while it exists (its key is its label,
	// and a thread group's process group is fixed), so only its values
	// decide whether its cached metrics still hold.
	proc := func(g *group) {
		c := g.total()
		if !g.series.fresh(c, g.threads, g.hot) {
			g.series.metrics = append(g.series.metrics,
				prometheus.MustNewConstMetric(descGroupSwitches, counter, float64(c.vol), g.key, "voluntary"),
				prometheus.MustNewConstMetric(descGroupSwitches, counter, float64(c.invol), g.key, "involuntary"),
				prometheus.MustNewConstMetric(descGroupCPU, counter, float64(c.runNs)/1e9, g.key),
				prometheus.MustNewConstMetric(descGroupWait, counter, float64(c.waitNs)/1e9, g.key),
				prometheus.MustNewConstMetric(descGroupThreads, gauge, float64(g.threads), g.key),
				prometheus.MustNewConstMetric(descGroupHot, gauge, float64(g.hot), g.key))
		}
		send(g.series.metrics)
	}
	thread := func(g *group) {
		c := g.total()
		if !g.series.fresh(c, g.threads, 0) {
			g.series.metrics = append(g.series.metrics,
				prometheus.MustNewConstMetric(descThreadSwitches, counter, float64(c.vol), g.proc.key, g.key, "voluntary"),
				prometheus.MustNewConstMetric(descThreadSwitches, counter, float64(c.invol), g.proc.key, g.key, "involuntary"),
				prometheus.MustNewConstMetric(descThreadThreads, gauge, float64(g.threads), g.proc.key, g.key))
		}
		send(g.series.metrics)
	}
	a.eachSeries(proc, thread)
}

func (e *Exporter) collectSelf(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descSelfDuration, gauge, e.took.Seconds())
	ch <- prometheus.MustNewConstMetric(descSelfSamples, counter, float64(e.samples))
	ch <- prometheus.MustNewConstMetric(descSelfTasks, gauge, float64(len(e.smp.Tasks)))
	ch <- prometheus.MustNewConstMetric(descSelfUnreadable, gauge, float64(e.smp.Unreadable))
	self := e.smp.Self
	ch <- prometheus.MustNewConstMetric(descSelfCPU, counter, self.CPUTime.Seconds())
	ch <- prometheus.MustNewConstMetric(descSelfSwitches, counter, float64(self.VoluntarySwitches), "voluntary")
	ch <- prometheus.MustNewConstMetric(descSelfSwitches, counter, float64(self.InvoluntarySwitches), "involuntary")
	dp, dt := e.acc.dropped()
	ch <- prometheus.MustNewConstMetric(descSelfGroups, gauge, float64(e.acc.exportedProcs), "process")
	ch <- prometheus.MustNewConstMetric(descSelfGroups, gauge, float64(e.acc.exportedThreads), "thread")
	ch <- prometheus.MustNewConstMetric(descSelfDropped, gauge, float64(dp), "process")
	ch <- prometheus.MustNewConstMetric(descSelfDropped, gauge, float64(dt), "thread")
}
