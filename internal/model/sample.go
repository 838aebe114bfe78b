// Package model turns raw kernel counters into rates. It is pure: the same two
// Samples always give the same Snapshot, so a recorded run replays through the
// very code that served it live.
package model

import (
	"sync/atomic"
	"time"
)

// SystemCounters are the host-wide raw counters of one sample.
type SystemCounters struct {
	// ContextSwitches is /proc/stat "ctxt": switches on all CPUs since boot.
	ContextSwitches uint64
	// Interrupts is /proc/stat "intr", first field: all interrupts since boot.
	Interrupts uint64
	// ProcsRunning and ProcsBlocked are instantaneous values from /proc/stat.
	ProcsRunning uint64
	ProcsBlocked uint64
	// CPUs is the number of CPU columns in /proc/interrupts (online CPUs).
	CPUs int
	// ReschedIPIs is the sum of the RES row of /proc/interrupts.
	ReschedIPIs uint64
	// ReschedPerCPU and InterruptsPerCPU are indexed by CPU column.
	// InterruptsPerCPU sums every row of /proc/interrupts for that CPU.
	ReschedPerCPU    []uint64
	InterruptsPerCPU []uint64
	// PSICPUSomeAvg10 is /proc/pressure/cpu "some avg10"; HasPSI is false
	// on kernels without pressure stall information.
	PSICPUSomeAvg10 float64
	HasPSI          bool
	// PSICPUSomeTotalUs is /proc/pressure/cpu "some total=": microseconds
	// in which some runnable task waited for a CPU, since boot (a counter).
	// HasPSITotal is false when the field is absent.
	PSICPUSomeTotalUs uint64
	HasPSITotal       bool
	// LoadAvg is the 1, 5 and 15 minute load average from /proc/loadavg.
	LoadAvg [3]float64
	// Unread says why /proc/stat could not be read or parsed in this
	// pass, "" when it was: its counters above are then zero, and no
	// interval that begins or ends here has host-wide rates. A pass goes
	// on without them, as it does without a thread that vanished.
	Unread string
}

// TaskCounters are the raw counters of one thread.
type TaskCounters struct {
	PID int
	TID int
	// Comm is the thread's name (/proc/PID/task/TID/comm); ProcessComm is the
	// name of the process's main thread.
	Comm        string
	ProcessComm string
	// StartTime is field 22 of stat, in clock ticks since boot. A TID whose
	// start time changed is a different thread that reused the number.
	StartTime uint64
	// VoluntarySwitches and InvoluntarySwitches come from status
	// (voluntary_ctxt_switches, nonvoluntary_ctxt_switches).
	VoluntarySwitches   uint64
	InvoluntarySwitches uint64
	// RunNs, WaitNs and Timeslices are the three fields of schedstat: time on
	// CPU, time runnable but waiting on a run queue, and times scheduled in.
	RunNs      uint64
	WaitNs     uint64
	Timeslices uint64
	// Counters are the counters Counter names, each turned into a rate
	// the same way (ThreadRates.PerSec).
	Counters [NumCounters]uint64
	// CPUsAllowed is status "Cpus_allowed_list", e.g. "0-3,8".
	CPUsAllowed string
	// State is the one-letter state from status (R, S, D, ...).
	State byte
	// LastCPU is field 39 of stat: the CPU the thread last ran on.
	LastCPU int
	// Cgroup is the process's cgroup path as /proc/PID/cgroup names it (the
	// v1 cpu controller's where it is not the root, else the unified one);
	// "" when unknown. It keys Sample.Cgroups.
	Cgroup string
	// ReadAt is when these counters were read, on the monotonic clock, as
	// an offset from the Sample's Time (the start of its pass). A pass
	// over 10,000 threads takes tens of milliseconds, hundreds when the
	// monitor is preempted, so a thread's rates are over its own interval,
	// from its ReadAt in one sample to its ReadAt in the next; see
	// ReadAtGrain for the rule the sampler follows. Zero means at the
	// Sample's Time (recordings made before read times were kept).
	ReadAt time.Duration
}

// Counter names a raw per-thread kernel counter that the model turns into
// a per-second rate over each thread's own interval, one loop for all of
// them: a thread whose counter steps back is a new thread (no row that
// interval), like one whose switch counts do. It indexes
// TaskCounters.Counters and ThreadRates.PerSec; fields.Counters says how a
// recording carries each one and fields.Thread which column shows its rate.
// A counter that a source cannot read stays 0, so its rate is 0.
type Counter int

const (
	// Migrations is se.nr_migrations from /proc/PID/task/TID/sched (the BPF
	// task walk has it in each record): how many times the scheduler moved
	// the thread to another CPU. The sampler reads it only for a thread
	// that ran, so between reads it keeps its last value; 0 where the
	// kernel has no such file (CONFIG_SCHED_DEBUG off) and in recordings
	// made before it was kept.
	Migrations Counter = iota
	// NumCounters is the number of counters.
	NumCounters
)

// ReadAtGrain is the resolution of TaskCounters.ReadAt: a whole multiple of
// it, rounded down, so every offset is at or before the moment it stands
// for. A finer clock would buy nothing: the kernel brings a running task's
// run time (schedstat's first field) up to date only at its scheduler tick,
// 1 to 10 ms, and a recording would pay for the noise of finer stamps in
// every sample. Rates are thus good to about one grain over the interval
// (0.1% at 1 s).
const ReadAtGrain = time.Duration(1 << 20)

// CgroupCounters are one cgroup's raw CPU bandwidth counters.
type CgroupCounters struct {
	// Path is the cgroup's path, as in TaskCounters.Cgroup.
	Path string
	// HasThrottling is true when cpu.stat was read and holds the bandwidth
	// counters (v1's cpu controller, or v2 with cpu enabled).
	HasThrottling bool
	// Periods, Throttled and ThrottledNs are cpu.stat's nr_periods,
	// nr_throttled and throttled time (v2's throttled_usec × 1000).
	Periods, Throttled, ThrottledNs uint64
	// LimitCPUs is quota/period (cpu.max or cfs_quota_us/cfs_period_us);
	// 0 when unlimited or unknown.
	LimitCPUs float64
	// Container is what runs in the group as the node names it; nil for
	// a group that is no container's or pod's, or when not resolved.
	Container *Container
}

// WaitTally is what a thread was seen waiting on during the interval that
// ends at this sample: the sampler looks at the hottest blocking threads
// several times between two samples.
type WaitTally struct {
	PID, TID int
	// Looks is how many times the thread was looked at; Reasons counts
	// those in which it was asleep, by reason (internal/waitreason's words).
	// Looks at a running thread count in Looks only.
	Looks   int
	Reasons []ReasonCount
	// Wchan and Syscall are the raw kernel function and syscall line of
	// the last look that found the thread asleep, for the detail view.
	Wchan, Syscall string
	// Settled marks a thread whose reason had settled (every look of an
	// earlier interval found it asleep for one reason, in one kernel
	// function), so it was looked at only at the refresh: its Reasons then
	// count its last ten looks that found it asleep, reaching back over
	// earlier intervals, and Wchan and Syscall may come from one of those.
	// Looks still counts this interval's looks. A thread none of whose
	// looks in this interval found it asleep has the same: its last asleep
	// looks of earlier intervals, if any, with Settled false.
	Settled bool
}

// ReasonCount is how many looks found one reason.
type ReasonCount struct {
	Reason string
	N      int
}

// Sample is one pass over /proc: raw counters, nothing derived.
type Sample struct {
	// Time is when the pass started; it carries Go's monotonic clock, which is
	// what rates are computed from. Each task's counters carry when, after
	// Time, they were read (TaskCounters.ReadAt).
	Time   time.Time
	System SystemCounters
	// Tasks is sorted by PID, then TID. Its elements are the source's to
	// write: the live sampler leaves in place those it wrote into the same
	// array in an earlier pass that have not changed since, so a caller
	// that changes one must set Seq to 0.
	Tasks []TaskCounters
	// Unreadable counts tasks that exist but whose files could not be read
	// (another user's tasks without privilege).
	Unreadable int
	// Self is ctxtop's own usage, so the monitor can show its own noise.
	Self SelfCounters
	// Cgroups holds every cgroup some task is in, sorted by Path; empty
	// when cgroups are not known (a fixture tree, an old kernel).
	Cgroups []CgroupCounters
	// Waits holds the wait-reason looks of the interval ending here,
	// sorted by PID, then TID.
	Waits []WaitTally
	// Wakeups is the wake-up tracer's read at the end of this interval,
	// raw as the tracer gave it (ComputeWakeups makes the rates); nil when
	// the tracer was off. A baseline sample's read, which only starts the
	// first interval, keeps its time and running totals but no pairs.
	Wakeups *WakeupSample
	// Stacks is the stack tracer's read at the end of this interval, the
	// interval's symbolized stacks and counts (the pipeline makes the
	// shares); nil when the tracer was off.
	Stacks *StackSample
	// Seq names this sample among all that any source made in this
	// process (NextSeq); 0 when the source names none. No two samples
	// share a Seq that is not 0.
	Seq uint64
	// SameTasksAs, when not 0, is the Seq of the sample made just before
	// this one by the same source, which holds the same tasks in the same
	// places of Tasks, each with the same fields, except the tasks at the
	// indexes in Moved (ascending) and every task's ReadAt. A recording's
	// decoder knows this from its deltas, the /proc path's sampler from
	// the threads whose schedstat moved, the BPF task walk from the
	// records it rewrote; Compute then visits only the tasks in Moved,
	// since every other one has zero rates, where a pass over 10,000
	// mostly idle threads spent its time reading them. Moved lives as
	// long as Tasks does.
	SameTasksAs uint64
	Moved       []int32
	// Source names what read Tasks: "bpf-task-iter" (one BPF walk of the
	// kernel's tasks) or "proc" (/proc, file by file); "" when unknown,
	// as in a recording, which does not keep it.
	Source string
}

// SelfCounters are getrusage(RUSAGE_SELF) figures for the monitoring process:
// all of its threads together.
type SelfCounters struct {
	CPUTime             time.Duration
	VoluntarySwitches   uint64
	InvoluntarySwitches uint64
}

// seqs hands out Sample.Seq to every source in the process, the live
// sampler's passes and the recording decoders' frames alike, so that no
// sample of one is ever taken for one following a sample of another.
var seqs atomic.Uint64

// NextSeq is a Seq no sample in this process has had.
func NextSeq() uint64 { return seqs.Add(1) }
