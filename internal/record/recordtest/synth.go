// Package recordtest makes recordings of a made-up host for tests and
// benchmarks: the size of a busy hour, a storm to find, every kind of task
// change.
package recordtest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Synth makes a run of samples like a host with threads tasks of which busy
// switch every interval; the rest never run. Some tasks come and go, one is
// renamed and one TID is reused, so every kind of frame record occurs.
type Synth struct {
	rng   *rand.Rand
	t     time.Time
	busy  int
	tasks []model.TaskCounters
	sys   model.SystemCounters
	self  model.SelfCounters
	n     int
	churn bool
	// StormFrom and StormTo are the samples (counting from 1) during
	// which system-wide switches jump by 5,000,000 a second: a spike.
	StormFrom, StormTo int
	// BusyRate, when set, is the system-wide switches per second of a
	// busy host, each interval off by up to ±BusyNoise (a fraction) as a
	// loaded host's are; a storm then multiplies it by StormFactor instead
	// of adding 5,000,000.
	BusyRate, BusyNoise, StormFactor float64
	// CgroupsAndWaits puts each process in a cgroup of its own, one in
	// ten of them with a CPU quota that throttles, and gives the eight
	// busiest threads wait looks, as the live monitor records them.
	CgroupsAndWaits bool
	cgroups         []model.CgroupCounters
	// Steady makes the busy threads move as real ones do instead of by
	// uniformly random amounts (see steady).
	Steady bool
	paces  []pace
	// ReadTimes stamps each task's counters with when a sampler would
	// have read them (see readTimes).
	ReadTimes bool
	last      []model.TaskCounters
	// Wakeups gives each sample a wake-up tracer read (see wakeups).
	Wakeups   bool
	wakeTime  time.Time
	wakeCPUs  []model.CPUSchedCount
	wakeDrops uint64
	// Stacks gives each sample a stack tracer read (see stacks).
	Stacks bool
}

// pace is a steady busy thread's own rate: how often it wakes and what
// each wake costs it.
type pace struct {
	wakes         float64 // per second
	runNs, waitNs float64 // per wake
}

// New is a host with threads tasks of which busy switch every second;
// churn adds exits, starts, renames and a reused TID.
func New(threads, busy int, churn bool) *Synth {
	s := &Synth{rng: rand.New(rand.NewPCG(1, 2)), t: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), busy: busy, churn: churn}
	for i := range threads {
		pid := 1000 + i/20*20
		s.tasks = append(s.tasks, model.TaskCounters{
			PID: pid, TID: 1000 + i, Comm: fmt.Sprintf("worker-%d", i%20), ProcessComm: fmt.Sprintf("svc-%d", pid),
			StartTime: uint64(5000 + i), VoluntarySwitches: uint64(s.rng.IntN(1e6)), InvoluntarySwitches: uint64(s.rng.IntN(1e4)),
			RunNs: uint64(s.rng.Int64N(1e12)), WaitNs: uint64(s.rng.Int64N(1e10)), Timeslices: uint64(s.rng.IntN(1e6)),
			CPUsAllowed: "0-1", State: 'S', LastCPU: i % 2,
		})
	}
	s.sys = model.SystemCounters{ContextSwitches: 1e9, Interrupts: 5e8, CPUs: 2, ReschedIPIs: 1e7,
		ReschedPerCPU: []uint64{5e6, 5e6}, InterruptsPerCPU: []uint64{2e8, 3e8}, HasPSI: true, LoadAvg: [3]float64{0.5, 0.4, 0.3}}
	return s
}

// Next advances one interval and returns a copy the caller may keep.
func (s *Synth) Next() model.Sample {
	s.n++
	// Sampling is never exactly on time.
	step := time.Second + time.Duration(s.rng.IntN(3e6))
	s.t = s.t.Add(step)
	stride := max(len(s.tasks)/max(s.busy, 1), 1)
	for i := 0; i < len(s.tasks) && i/stride < s.busy; i += stride {
		t := &s.tasks[i]
		if s.Steady {
			s.steady(t, i/stride)
			continue
		}
		v := uint64(200 + s.rng.IntN(20000))
		t.VoluntarySwitches += v
		t.InvoluntarySwitches += uint64(s.rng.IntN(50))
		t.RunNs += uint64(s.rng.Int64N(2e8))
		t.WaitNs += uint64(s.rng.Int64N(5e6))
		t.Timeslices += v
		t.LastCPU = s.rng.IntN(2)
		if s.rng.IntN(3) == 0 {
			t.State = 'R'
		} else {
			t.State = 'S'
		}
	}
	if s.churn {
		switch s.n % 7 {
		case 3: // a thread exits
			i := 1 + s.rng.IntN(len(s.tasks)-1)
			s.tasks = append(s.tasks[:i], s.tasks[i+1:]...)
		case 5: // a thread starts at the end
			last := s.tasks[len(s.tasks)-1]
			s.tasks = append(s.tasks, model.TaskCounters{PID: last.PID, TID: last.TID + 1, Comm: "new", ProcessComm: last.ProcessComm,
				StartTime: uint64(9000 + s.n), CPUsAllowed: "0", State: 'R'})
		case 6: // a rename, an affinity change and a reused TID
			s.tasks[0].Comm = fmt.Sprintf("renamed-%d", s.n)
			s.tasks[1].CPUsAllowed = "1"
			s.tasks[2].StartTime += 100
			s.tasks[2].VoluntarySwitches = 3
		}
	}
	var waits []model.WaitTally
	if s.CgroupsAndWaits {
		waits = s.cgroupsAndWaits(stride)
	}
	if s.ReadTimes {
		s.readTimes()
	}
	var wakeups *model.WakeupSample
	if s.Wakeups {
		wakeups = s.wakeups(stride)
	}
	storm := s.n >= s.StormFrom && s.n < s.StormTo
	var d uint64
	if s.BusyRate > 0 {
		rate := s.BusyRate * (1 + s.BusyNoise*(2*s.rng.Float64()-1))
		if storm {
			rate *= s.StormFactor
		}
		d = uint64(rate * step.Seconds())
	} else {
		d = uint64(500 + s.rng.IntN(3000))
		if storm {
			d += 5_000_000
		}
	}
	s.sys.ContextSwitches += d
	s.sys.Interrupts += d / 3
	s.sys.ReschedIPIs += d / 10
	s.sys.ReschedPerCPU[s.n%2] += d / 10
	s.sys.InterruptsPerCPU[0] += d / 6
	s.sys.InterruptsPerCPU[1] += d / 6
	s.sys.ProcsRunning = uint64(1 + s.rng.IntN(4))
	s.sys.PSICPUSomeAvg10 = float64(s.rng.IntN(1000)) / 100
	if s.n%5 == 0 {
		s.sys.LoadAvg[0] += 0.01
	}
	s.self.CPUTime += time.Duration(s.rng.IntN(2e6))
	s.self.VoluntarySwitches += 4
	out := model.Sample{Time: s.t, System: s.sys, Tasks: append([]model.TaskCounters(nil), s.tasks...), Self: s.self,
		Cgroups: append([]model.CgroupCounters(nil), s.cgroups...), Waits: waits, Wakeups: wakeups}
	out.System.ReschedPerCPU = append([]uint64(nil), s.sys.ReschedPerCPU...)
	out.System.InterruptsPerCPU = append([]uint64(nil), s.sys.InterruptsPerCPU...)
	if s.Stacks {
		out.Stacks = s.stacks(stride)
	}
	return out
}

// synthStacks are the stacks the busy threads block and are woken at:
// kernel frames, then user frames, innermost first, as the tracer
// symbolizes them.
var synthStacks = []model.Stack{
	{Frames: []string{"__schedule", "schedule", "futex_wait", "do_syscall_64", "__lll_lock_wait", "consumer_wait", "worker_main", "libc.so.6+0x891f5"},
		KernelFrames: 4, Own: "consumer_wait"},
	{Frames: []string{"__schedule", "schedule", "futex_wait", "do_syscall_64", "WorkQueue<Job>::take(std::chrono::duration<long>)", "WorkQueue<Job>::run", "start_thread"},
		KernelFrames: 4, Own: "WorkQueue<Job>::take(std::chrono::duration<long>)"},
	{Frames: []string{"__schedule", "schedule", "pipe_read", "do_syscall_64", "libc.so.6+0x11ba5e"},
		KernelFrames: 4, NoFramePointers: "libc.so.6"},
	{Frames: []string{"try_to_wake_up", "futex_wake", "do_syscall_64", "producer_put", "driver", "libc.so.6+0x891f5"},
		KernelFrames: 3, Own: "producer_put"},
	{Frames: []string{"[unknown]"}},
}

// stacks is the tracer's read of the interval: each of the first eight
// busy threads blocked at one to three of the stacks above and woken
// from one or two, by the next busy thread; the counts are random.
func (s *Synth) stacks(stride int) *model.StackSample {
	st := &model.StackSample{Time: s.t.Add(5 * time.Millisecond), Dropped: uint64(s.n % 3), InterruptWakings: uint64(s.n % 5)}
	var busy []*model.TaskCounters
	for i := 0; i < len(s.tasks) && i/stride < min(s.busy, 8); i += stride {
		busy = append(busy, &s.tasks[i])
	}
	for k, t := range busy {
		st.Targets = append(st.Targets, t.TID)
		for j := range 1 + (k+s.n)%3 {
			st.Blocked = append(st.Blocked, model.StackCount{TID: t.TID, PID: t.PID, Stack: synthStacks[(k+j)%3],
				Count: uint64(1 + s.rng.IntN(200))})
		}
		waker := busy[(k+1)%len(busy)]
		for j := range 1 + k%2 {
			st.Woken = append(st.Woken, model.StackCount{TID: t.TID, PID: waker.PID, Waker: waker.Comm, Stack: synthStacks[3+j],
				Count: uint64(1 + s.rng.IntN(100))})
		}
	}
	return st
}

// steady moves busy thread k as a thread that sleeps 1–10 ms between
// short bursts of work does, the workload the README measures: each wakes
// at its own rate, 100–1,000 times a second, jittered by up to 2% a second
// (timer slack, a loaded run queue); each wake runs 5–50 µs and waits
// 1–20 µs to get a CPU, jittered by up to 25%; about one wake in 500 is
// preempted; the thread is seen sleeping nine times in ten and on either
// CPU. Its counters thus move by about the same amount each second, with
// the noise of a busy host in the nanoseconds, as real counters do.
func (s *Synth) steady(t *model.TaskCounters, k int) {
	for len(s.paces) <= k {
		s.paces = append(s.paces, pace{
			wakes: 100 + 900*s.rng.Float64(),
			runNs: 5e3 + 45e3*s.rng.Float64(), waitNs: 1e3 + 19e3*s.rng.Float64(),
		})
	}
	p := s.paces[k]
	jitter := func(f float64) float64 { return 1 + f*(2*s.rng.Float64()-1) }
	wakes := p.wakes * jitter(0.02)
	v := uint64(wakes)
	inv := uint64(wakes/500 + s.rng.Float64())
	t.VoluntarySwitches += v
	t.InvoluntarySwitches += inv
	t.RunNs += uint64(wakes * p.runNs * jitter(0.25))
	t.WaitNs += uint64(wakes * p.waitNs * jitter(0.25))
	t.Timeslices += v + inv
	t.LastCPU = s.rng.IntN(2)
	if s.rng.IntN(10) == 0 {
		t.State = 'R'
	} else {
		t.State = 'S'
	}
}

// readTimes stamps the tasks as the sampler does (internal/sampler's
// readClock): a clock reading at each process, after each task whose
// schedstat moved (or that is new), and every 256 tasks that did not,
// rounded down to the grain; each task takes the last reading. The pass
// costs what one does on a small VM: 0.2 ms for the system files, 5 µs a
// process, 1.5 µs a schedstat read and 20 µs more for a task that moved,
// each ±20%; one pass in fifty is preempted for 1–50 ms at a random task.
func (s *Synth) readTimes() {
	var clock, stamp time.Duration
	unread := 0
	tick := func() { stamp, unread = clock&^(model.ReadAtGrain-1), 0 }
	cost := func(ns float64) time.Duration { return time.Duration(ns * (0.8 + 0.4*s.rng.Float64())) }
	clock += cost(200e3)
	preempt := -1
	if s.rng.IntN(50) == 0 {
		preempt = s.rng.IntN(len(s.tasks))
	}
	lastPID, j := -1, 0
	for i := range s.tasks {
		t := &s.tasks[i]
		if i == preempt {
			clock += time.Duration(1+s.rng.IntN(50)) * time.Millisecond
		}
		if t.PID != lastPID {
			clock += cost(5e3)
			tick()
			lastPID = t.PID
		}
		if unread++; unread > 256 {
			tick()
		}
		clock += cost(1.5e3)
		for j < len(s.last) && (s.last[j].PID < t.PID || s.last[j].PID == t.PID && s.last[j].TID < t.TID) {
			j++
		}
		fresh := j >= len(s.last) || s.last[j].PID != t.PID || s.last[j].TID != t.TID || s.last[j].StartTime != t.StartTime
		if fresh || s.last[j].RunNs != t.RunNs || s.last[j].WaitNs != t.WaitNs || s.last[j].Timeslices != t.Timeslices {
			tick()
			clock += cost(20e3)
		}
		t.ReadAt = stamp
	}
	s.last = append(s.last[:0], s.tasks...)
}

// wakeups is the tracer's read of the interval: each busy thread woke by
// the next one at about its own wake rate, one of them also by a network
// interrupt (a pseudo-waker with no thread, PID 0), each pair's wake-to-run
// latencies over a few buckets around 8–64 µs; the per-CPU totals and the
// dropped count run on.
func (s *Synth) wakeups(stride int) *model.WakeupSample {
	var busy []*model.TaskCounters
	for i := 0; i < len(s.tasks) && i/stride < s.busy; i += stride {
		busy = append(busy, &s.tasks[i])
	}
	w := &model.WakeupSample{Time: s.t.Add(3 * time.Millisecond), Since: s.wakeTime}
	s.wakeTime = w.Time
	for k, wakee := range busy {
		waker := busy[(k+1)%len(busy)]
		n := uint64(100 + s.rng.IntN(900))
		p := model.WakeupPairCount{
			WakerPID: waker.PID, WakerTID: waker.TID, WakerComm: waker.Comm,
			WakeePID: wakee.PID, WakeeTID: wakee.TID, WakeeComm: wakee.Comm,
			Wakeups: n, Resolved: n - uint64(s.rng.IntN(3)), CrossCPU: n / uint64(2+s.rng.IntN(3)),
		}
		for b := 13; b < 17; b++ {
			p.Latency[b] = uint64(s.rng.IntN(int(n/2) + 1))
		}
		w.Pairs = append(w.Pairs, p)
	}
	if len(busy) > 0 {
		w.Pairs = append(w.Pairs, model.WakeupPairCount{WakerComm: "irq/24-eth0", WakeePID: busy[0].PID, WakeeTID: busy[0].TID,
			WakeeComm: busy[0].Comm, Wakeups: uint64(s.rng.IntN(50)), Resolved: 1})
	}
	if s.wakeCPUs == nil {
		s.wakeCPUs = make([]model.CPUSchedCount, 2)
	}
	for i := range s.wakeCPUs {
		s.wakeCPUs[i].Switches += uint64(1000 + s.rng.IntN(2000))
		s.wakeCPUs[i].Migrations += uint64(s.rng.IntN(100))
	}
	if s.rng.IntN(20) == 0 {
		s.wakeDrops += uint64(s.rng.IntN(1000))
	}
	w.CPUs, w.Dropped = append([]model.CPUSchedCount(nil), s.wakeCPUs...), s.wakeDrops
	return w
}

// cgroupsAndWaits moves the cgroups' counters on and returns the wait
// looks of the interval.
func (s *Synth) cgroupsAndWaits(stride int) []model.WaitTally {
	for i := range s.tasks {
		t := &s.tasks[i]
		if t.Cgroup == "" {
			t.Cgroup = fmt.Sprintf("/system.slice/svc-%d.service", t.PID)
		}
	}
	if s.cgroups == nil {
		for i := range s.tasks {
			if i == 0 || s.tasks[i].Cgroup != s.tasks[i-1].Cgroup {
				s.cgroups = append(s.cgroups, model.CgroupCounters{Path: s.tasks[i].Cgroup})
			}
		}
		slices.SortFunc(s.cgroups, func(a, b model.CgroupCounters) int { return strings.Compare(a.Path, b.Path) })
		for i := range s.cgroups {
			if i%10 == 0 {
				s.cgroups[i].HasThrottling, s.cgroups[i].LimitCPUs = true, 0.5
			}
		}
	}
	for i := range s.cgroups {
		if c := &s.cgroups[i]; c.HasThrottling {
			c.Periods += 10
			th := uint64(s.rng.IntN(11))
			c.Throttled += th
			c.ThrottledNs += th * uint64(s.rng.Int64N(5e7))
		}
	}
	var waits []model.WaitTally
	for i := 0; i < len(s.tasks) && len(waits) < 8; i += stride {
		t := &s.tasks[i]
		pipe := 1 + s.rng.IntN(9)
		waits = append(waits, model.WaitTally{PID: t.PID, TID: t.TID, Looks: 10,
			Reasons: []model.ReasonCount{{Reason: "pipe read", N: pipe}, {Reason: "futex wait", N: 10 - pipe}},
			Wchan:   "anon_pipe_read", Syscall: fmt.Sprintf("0 0x%x 0x7ffd1b5c8a60 0x1", 3+i%20)})
	}
	return waits
}

// Run is n samples of a New host.
func Run(threads, busy, n int, churn bool) []model.Sample {
	s := New(threads, busy, churn)
	out := make([]model.Sample, n)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}
