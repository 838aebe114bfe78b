package model

import "time"

// CPURates are per-CPU interrupt rates.
type CPURates struct {
	InterruptsPerSec  float64
	ReschedIPIsPerSec float64
}

// SystemRates are host-wide rates over one interval.
type SystemRates struct {
	ContextSwitchesPerSec float64
	InterruptsPerSec      float64
	ReschedIPIsPerSec     float64
	ProcsRunning          uint64
	ProcsBlocked          uint64
	CPUs                  int
	PerCPU                []CPURates
	PSICPUSomeAvg10       float64
	HasPSI                bool
	LoadAvg               [3]float64
	// NoRates says why this interval has no host-wide rates, "" when it
	// has them: the context switch, interrupt and rescheduling IPI rates
	// and PerCPU are then 0 and nil, and must be shown as unknown, not as
	// a quiet host. See StepsBack for the rule.
	NoRates string
}

// ThreadRates are one thread's rates over one interval.
type ThreadRates struct {
	PID         int
	TID         int
	Comm        string
	ProcessComm string
	// VoluntaryPerSec is pidstat's cswch/s, InvoluntaryPerSec its nvcswch/s.
	VoluntaryPerSec   float64
	InvoluntaryPerSec float64
	// CPUPercent is time on CPU over the interval, 100 = one full CPU.
	CPUPercent float64
	// WaitPercent is time spent runnable on a run queue, not running, over
	// the thread's own interval: at most the share of it the thread did not
	// run, so CPUPercent+WaitPercent never passes 100.
	WaitPercent float64
	// EarlierWait is run-queue wait the kernel reported in this interval
	// that does not fit in it. The kernel adds a wait to the counter only
	// when the thread gets a CPU, whole, so a wait that began before the
	// interval lands in the interval that ends it: what exceeds the time
	// the thread did not run began earlier. It is kept here, not dropped,
	// and not counted in WaitPercent.
	EarlierWait time.Duration
	// PerSec holds each Counter's rate, e.g. PerSec[Migrations], how often
	// the scheduler moved the thread to another CPU: each move leaves its
	// cache behind.
	PerSec      [NumCounters]float64
	CPUsAllowed string
	// Pinned is true when the thread may run on fewer CPUs than the host has.
	Pinned  bool
	State   byte
	LastCPU int
	Hot     bool
	// Why says why a hot thread is hot; the zero Why when not hot.
	Why Why
	// Cgroup is the thread's process's cgroup path, "" when unknown.
	Cgroup string
	// Container is what runs in that cgroup, nil for none or unknown.
	Container *Container
	// WaitOn is what the thread was seen waiting on, biggest share first;
	// nil when it was not looked at. Shares sum to 1.
	WaitOn []WaitShare
	// Wchan and Syscall are the raw last looks, for the detail view.
	Wchan, Syscall string
	// BlockedAt and WokenFrom are the thread's top stacks when the stack
	// tracer targeted it (see Stacks); nil otherwise.
	BlockedAt, WokenFrom []StackShare
}

// WaitShare is one reason's share of the looks that found a thread asleep.
type WaitShare struct {
	Reason string
	Share  float64
}

// TotalPerSec is voluntary plus involuntary switches per second.
func (t ThreadRates) TotalPerSec() float64 { return t.VoluntaryPerSec + t.InvoluntaryPerSec }

// HotBlocking reports whether the thread is hot with mostly voluntary
// switches: it is hot because it blocks, and what it waits on says why.
func (t *ThreadRates) HotBlocking() bool { return t.Hot && t.VoluntaryPerSec >= t.InvoluntaryPerSec }

// ProcessRates are the sums over every thread of one process.
type ProcessRates struct {
	PID  int
	Comm string
	// Threads is the number of threads the process had in the later sample.
	Threads           int
	VoluntaryPerSec   float64
	InvoluntaryPerSec float64
	CPUPercent        float64
	WaitPercent       float64
	// EarlierWait is the sum of the threads' (see ThreadRates).
	EarlierWait time.Duration
	Hot         bool
	Why         Why
	// Cgroup is the process's cgroup path, "" when unknown.
	Cgroup string
	// Container is what runs in that cgroup, nil for none or unknown.
	Container *Container
}

// TotalPerSec is voluntary plus involuntary switches per second.
func (p ProcessRates) TotalPerSec() float64 { return p.VoluntaryPerSec + p.InvoluntaryPerSec }

// CgroupRates are the sums over the threads of one cgroup, and its CPU
// throttling over the interval.
type CgroupRates struct {
	// Path is as /proc/PID/cgroup names it; Name is how users name it
	// (see CgroupName).
	Path string
	Name string
	// Processes and Threads count every process and thread in the group,
	// idle or not.
	Processes, Threads int
	VoluntaryPerSec    float64
	InvoluntaryPerSec  float64
	CPUPercent         float64
	// HasThrottling is false when the group's cpu.stat could not be read
	// or has no bandwidth counters: the throttling figures are then unknown.
	HasThrottling bool
	// ThrottledPercent is the share of CFS periods in which the group ran
	// out of quota; ThrottledMsPerSec the time its threads spent throttled.
	ThrottledPercent  float64
	ThrottledMsPerSec float64
	// LimitCPUs is the quota in CPUs, 0 when none.
	LimitCPUs float64
	// Container is what runs in the group, nil for none or unknown; Name
	// is then its title ("namespace/pod/container").
	Container *Container
	Hot       bool
	Why       Why
}

// TotalPerSec is voluntary plus involuntary switches per second.
func (c CgroupRates) TotalPerSec() float64 { return c.VoluntaryPerSec + c.InvoluntaryPerSec }

// Spike reports the system spike rule (spike.go): cs/s well above its
// recent baseline.
type Spike struct {
	Active bool
	// Baseline is the cs/s the rate was judged against, the median of the
	// recent window; 0 while there is too little history to judge.
	Baseline float64
	// Factor is the rate over the baseline, for an active spike over a
	// baseline above 0; 0 otherwise.
	Factor float64
	// Window is how far back the baseline looks (format.SpikeReason
	// words it).
	Window time.Duration
}

// Snapshot is everything derived from two Samples.
type Snapshot struct {
	Time     time.Time
	Interval time.Duration
	System   SystemRates
	// Threads holds every thread with a non-zero switch, CPU or run-queue
	// wait rate (a thread that only waited is starved, not idle), sorted by
	// TotalPerSec descending, then CPUPercent descending, then PID and TID.
	Threads []ThreadRates
	// Processes holds every process with a non-zero rate, sorted likewise.
	// Its rates, WaitPercent included, are sums over the process's threads.
	Processes []ProcessRates
	// Cgroups holds every cgroup with a thread that switched or ran, or
	// that was throttled: throttled ones first, then busiest first.
	Cgroups []CgroupRates
	Spike   Spike
	// Tasks is the number of threads in the later sample, and Source what
	// read them (Sample.Source).
	Tasks      int
	Source     string
	Unreadable int
	// Wakeups is the wake-up graph, nil unless the tracer is on.
	Wakeups *Wakeups
	// Stacks is where target threads block and are woken from, nil
	// unless the stack tracer is on.
	Stacks *Stacks
	// Self is ctxtop's own cost over the interval.
	Self SelfRates
	// UnattributedPerSec is the part of System.ContextSwitchesPerSec that no
	// thread row holds: threads born or exited within the interval (a rate
	// needs two reads of a live thread), and switches into a CPU's idle task,
	// which has no thread in /proc. Never negative; 0 when only some
	// processes were sampled.
	UnattributedPerSec float64
	// Partial says only some processes were sampled (--pid): the rows are
	// not the whole host, so there is no remainder to show. Otherwise a
	// remainder of 0 is a figure like any other (under a heavy load the
	// threads, read a moment after /proc/stat, can sum past the header).
	Partial bool
	// Exited holds the threads of the earlier sample that are gone from
	// the later one, sorted by PID, then TID: they exited within the
	// interval (a TID now naming a thread with another start time counts
	// as its old thread's exit). A view showing one of them says it is
	// gone instead of showing its last figures as current. A task that
	// turned unreadable is gone from the samples too, and listed.
	Exited []ExitedTask
}

// ExitedTask is a thread that exited within a Snapshot's interval.
type ExitedTask struct {
	PID, TID int
	// Process is true when no thread of PID is left: the process exited.
	Process bool
}

// UnattributedWhy says where Snapshot.UnattributedPerSec went, in the words
// every view uses.
const UnattributedWhy = "new/exited tasks, idle"

// UnattributedWhyHidden replaces UnattributedWhy when the procfs hides
// other users' processes (hidepid): their switches are in the system's
// count and in no row, so they are most of the remainder.
const UnattributedWhyHidden = "hidden tasks (hidepid)"

// SelfRates are the monitor's own CPU use and context switches.
type SelfRates struct {
	// CPUPercent is of one CPU.
	CPUPercent     float64
	SwitchesPerSec float64
}
