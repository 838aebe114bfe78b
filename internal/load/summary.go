package load

import (
	"encoding/json"
	"time"
)

// Task is one workload thread: its process and thread IDs.
type Task struct {
	PID int `json:"pid"`
	TID int `json:"tid"`
}

// Progress is a running workload's live state.
type Progress struct {
	Config  Config
	Elapsed time.Duration
	// RoundTrips counts round trips; in pool mode work items, in poll mode
	// wake-ups.
	RoundTrips uint64
	// NsPerRoundTrip is one pair's round-trip time (one thread's time per
	// item or wake-up) over the last one to two seconds, for a live display.
	NsPerRoundTrip float64
	// Threads are the workload's threads; empty in goroutine mode, whose
	// goroutines have no thread of their own.
	Threads []Task
	// PIDs are the workload's processes: the one ctxtop started for it,
	// then process mode's partner. None of them is this process.
	PIDs []int
}

// Summary is a finished run's result; its JSON keys are ctxtop load -o json.
type Summary struct {
	Mode  Mode  `json:"mode"`
	CPUs  []int `json:"cpus"` // [] when unpinned
	Pairs int   `json:"pairs"`
	// DurationS is the wall time the pairs ran, in seconds.
	DurationS  float64 `json:"duration_s"`
	RoundTrips uint64  `json:"round_trips"`
	// NsPerRoundTrip is the time one pair takes for a round trip:
	// duration × pairs / round trips.
	NsPerRoundTrip float64 `json:"ns_per_round_trip"`
	// Switch counts are the kernel's, summed over the threads
	// SwitchesCounted names: the workload's own (both processes in process
	// mode), or in goroutine mode, whose goroutines have no threads of
	// their own, every thread of the workload process. Those are the
	// runtime's: a goroutine made runnable wakes an idle P's thread to look
	// for work, which finds the hand-off done and parks again in futex.
	// SwitchesUnknown says why the kernel's switch counts are unknown, ""
	// when they are known: the workload process ended without its summary,
	// or a workload thread's counters could not be read. The switch figures
	// are then 0 here and null in JSON, and the reports say "unknown".
	SwitchesUnknown      string  `json:"switches_unknown,omitempty"`
	SwitchesVoluntary    uint64  `json:"switches_voluntary"`
	SwitchesInvoluntary  uint64  `json:"switches_involuntary"`
	SwitchesCounted      string  `json:"switches_counted"`
	SwitchesPerRoundTrip float64 `json:"switches_per_round_trip"`
	// NsPerSwitch is the cost per kernel-counted switch: NsPerRoundTrip /
	// SwitchesPerRoundTrip. It is 0 when there was under one switch per
	// round trip: such a round trip is not made of switches (syscall and
	// goroutine modes), and the quotient would exceed the round trip itself.
	NsPerSwitch float64 `json:"ns_per_switch"`
	// Migrations is the sum of se.nr_migrations over the workload's
	// threads; nil (JSON null) when the kernel does not expose it.
	Migrations *uint64 `json:"migrations"`
	// MigrationsPerRoundTrip is Migrations over the round trips (items,
	// wake-ups); nil with Migrations.
	MigrationsPerRoundTrip *float64 `json:"migrations_per_round_trip"`
	// ReschedIPIs are the rescheduling interrupts (/proc/interrupts RES,
	// all CPUs) over the run: one CPU telling another to run its
	// scheduler, typically to run a task it woke. CallIPIs are the
	// function-call interrupts (CAL), which carry a wake-up to a CPU that
	// shares no cache with the waker (the kernel's wake list). Both are
	// system-wide, so they include whatever else ran; nil when
	// /proc/interrupts is unreadable. WakeupIPIsPerRoundTrip is both
	// together per round trip: what crossing CPUs costs in interrupts.
	ReschedIPIs             *uint64  `json:"resched_ipis"`
	ReschedIPIsPerRoundTrip *float64 `json:"resched_ipis_per_round_trip"`
	CallIPIs                *uint64  `json:"call_ipis"`
	WakeupIPIsPerRoundTrip  *float64 `json:"wakeup_ipis_per_round_trip"`
	// HW are hardware counters over the workload's threads; nil where the
	// PMU is not usable, and HWNote says why ("" when it is).
	HW     *HWCounts `json:"hw"`
	HWNote string    `json:"hw_note"`

	// WorkingSet is the bytes each side walked per round trip.
	WorkingSet int64 `json:"working_set_bytes,omitempty"`
	// WalkNsPerRoundTrip is what both sides' walks take with no switch in
	// between, measured in the same run on the same threads and CPUs:
	// the part of NsPerRoundTrip that is not the switch.
	WalkNsPerRoundTrip float64 `json:"walk_ns_per_round_trip,omitempty"`
	// NsPerRoundTripNet is NsPerRoundTrip − WalkNsPerRoundTrip: the
	// switches' cost with the caches each side finds cold (as lmbench
	// lat_ctx -s reports it). Its growth over a run without a working set
	// is the indirect cost.
	NsPerRoundTripNet float64 `json:"ns_per_round_trip_net,omitempty"`

	// Threads is the pool's or poller's thread count.
	Threads int `json:"threads,omitempty"`
	// Pool mode: work items done, their rate, one item's CPU time, the
	// involuntary switches per second over the pool's threads, and the
	// share of their time spent runnable but waiting for a CPU.
	Items             uint64   `json:"items,omitempty"`
	ItemsPerSec       float64  `json:"items_per_s,omitempty"`
	WorkNs            float64  `json:"work_ns,omitempty"`
	InvoluntaryPerSec float64  `json:"involuntary_per_s,omitempty"`
	RunQueueWaitShare *float64 `json:"run_queue_wait_share,omitempty"`
	// CPUS is the pool threads' time on a CPU (schedstat), in seconds.
	CPUS float64 `json:"cpu_s,omitempty"`
	// CPUQuota is the CPU limit the pool ran under; ThrottledShare the
	// share of the cgroup's CFS periods in which it was throttled, and
	// ThrottledS the time its threads were held back.
	CPUQuota       float64  `json:"cpu_quota,omitempty"`
	CgroupPeriods  uint64   `json:"cgroup_periods,omitempty"`
	ThrottledShare *float64 `json:"throttled_share,omitempty"`
	ThrottledS     float64  `json:"throttled_s,omitempty"`
	// Poll mode: wake-ups, their rate in all and per thread, what the
	// period promises (threads / period), and the kernel's voluntary
	// switches per second per thread, which should match.
	PeriodNs                 float64 `json:"period_ns,omitempty"`
	Wakeups                  uint64  `json:"wakeups,omitempty"`
	WakeupsPerSec            float64 `json:"wakeups_per_s,omitempty"`
	WakeupsPerSecPerThread   float64 `json:"wakeups_per_s_per_thread,omitempty"`
	ExpectedWakeupsPerSec    float64 `json:"expected_wakeups_per_s,omitempty"`
	VoluntaryPerSecPerThread float64 `json:"voluntary_per_s_per_thread,omitempty"`

	// Err is set when the workload process ended without a summary of its
	// own (killed, say): the figures then are what was known here.
	Err string `json:"error,omitempty"`
}

// What SwitchesCounted says.
const (
	CountedWorkload = "workload threads"
	CountedProcess  = "every thread of the process"
)

// NsPerSwitch is the cost per kernel-counted switch, or 0 where it does not
// apply: under one switch per round trip.
func NsPerSwitch(nsPerRoundTrip, switchesPerRoundTrip float64) float64 {
	if switchesPerRoundTrip < 1 || nsPerRoundTrip <= 0 {
		return 0
	}
	return nsPerRoundTrip / switchesPerRoundTrip
}

// SwitchesPerSecond is the kernel-counted switch rate over the run.
func (s Summary) SwitchesPerSecond() float64 {
	if s.DurationS <= 0 {
		return 0
	}
	return float64(s.Switches()) / s.DurationS
}

// Switches is the kernel's count of both kinds.
func (s Summary) Switches() uint64 { return s.SwitchesVoluntary + s.SwitchesInvoluntary }

// Units are what the run counted: round trips, work items or wake-ups.
func (s Summary) Units() uint64 {
	if count := s.Mode.Info().count; count != nil {
		return *count(&s)
	}
	return s.RoundTrips
}

// MarshalJSON writes the switch figures as null when they are unknown: a 0
// there would read as a run that never switched.
func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary // without this method
	if s.SwitchesUnknown == "" {
		return json.Marshal(plain(s))
	}
	// The outer fields shadow the embedded ones of the same JSON name.
	return json.Marshal(struct {
		plain
		SwitchesVoluntary    *uint64  `json:"switches_voluntary"`
		SwitchesInvoluntary  *uint64  `json:"switches_involuntary"`
		SwitchesPerRoundTrip *float64 `json:"switches_per_round_trip"`
		NsPerSwitch          *float64 `json:"ns_per_switch"`
	}{plain: plain(s)})
}
