package tuitest

import (
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Blocking is the WHY of a hot blocking row with wait% w.
func Blocking(w float32) model.Why {
	return model.Why{Kind: model.Blocking, HasWait: true, Wait: w}
}

// Snapshot is a fixed snapshot with the cases the views must handle: a hot
// pinned ping-pong pair, a thread pool, a quiet thread, a spike, and PSI.
func Snapshot() model.Snapshot {
	th := func(pid, tid int, comm, pcomm string, vol, invol, cpu, wait float64, cpus string, pinned bool, why model.Why) model.ThreadRates {
		return model.ThreadRates{
			PID: pid, TID: tid, Comm: comm, ProcessComm: pcomm,
			VoluntaryPerSec: vol, InvoluntaryPerSec: invol, CPUPercent: cpu, WaitPercent: wait,
			CPUsAllowed: cpus, Pinned: pinned, State: 'S', LastCPU: tid % 2,
			Hot: why.Hot(), Why: why,
		}
	}
	threads := []model.ThreadRates{
		th(4242, 4243, "pp-ping", "pingpong", 183_412, 12, 41.5, 3.2, "0", true, Blocking(3)),
		th(4242, 4244, "pp-pong", "pingpong", 183_398, 9, 40.9, 2.8, "0", true, Blocking(3)),
		th(901, 911, "pool-1-thread-1", "java", 2_310, 840, 12.0, 18.5, "0-1", false, Blocking(19)),
		th(901, 912, "pool-1-thread-2", "java", 2_204, 801, 11.7, 17.9, "0-1", false, Blocking(18)),
		th(901, 913, "pool-1-thread-3", "java", 1_990, 12, 10.1, 1.0, "0-1", false, Blocking(1)),
		th(1, 1, "systemd", "systemd", 3, 0, 0.1, 0, "0-1", false, model.Why{}),
		th(777, 777, "a-process-with-a-very-long-name", "a-process-with-a-very-long-name", 1.4, 0.2, 0.0, 0, "0-1", false, model.Why{}),
	}
	procs := []model.ProcessRates{
		{PID: 4242, Comm: "pingpong", Threads: 4, VoluntaryPerSec: 366_810, InvoluntaryPerSec: 21, CPUPercent: 82.4, WaitPercent: 3.0, Hot: true, Why: Blocking(3)},
		{PID: 901, Comm: "java", Threads: 40, VoluntaryPerSec: 6_504, InvoluntaryPerSec: 1_653, CPUPercent: 33.8, WaitPercent: 12.4, Hot: true, Why: Blocking(12)},
		{PID: 1, Comm: "systemd", Threads: 1, VoluntaryPerSec: 3, CPUPercent: 0.1},
		{PID: 777, Comm: "a-process-with-a-very-long-name", Threads: 1, VoluntaryPerSec: 1.4, InvoluntaryPerSec: 0.2},
	}
	// The pool moves between CPUs; the pinned pair cannot.
	threads[2].PerSec[model.Migrations], threads[3].PerSec[model.Migrations], threads[4].PerSec[model.Migrations] = 310, 295, 12
	return model.Snapshot{
		Time:     time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC),
		Interval: time.Second,
		System: model.SystemRates{
			ContextSwitchesPerSec: 402_118, InterruptsPerSec: 21_530, ReschedIPIsPerSec: 8_112,
			ProcsRunning: 3, ProcsBlocked: 0, CPUs: 2,
			PerCPU: []model.CPURates{
				{InterruptsPerSec: 15_020, ReschedIPIsPerSec: 7_950},
				{InterruptsPerSec: 6_510, ReschedIPIsPerSec: 162},
			},
			PSICPUSomeAvg10: 12.5, HasPSI: true, LoadAvg: [3]float64{1.52, 0.81, 0.33},
		},
		Threads:   threads,
		Processes: procs,
		Spike:     model.Spike{Active: true, Baseline: 16_750, Factor: 12, Window: 5 * time.Minute},
		Tasks:     212,
		// The header's cs/s less the sum over the threads above.
		UnattributedPerSec: 27_125.4,
		Self:               model.SelfRates{CPUPercent: 0.3, SwitchesPerSec: 4},
	}
}

// History is a fixed run of system rates for sparklines, oldest first.
func History(n int) []model.Snapshot {
	base := Snapshot()
	out := make([]model.Snapshot, n)
	for i := range out {
		s := base
		f := float64((i*37)%11+1) / 11
		s.System.ContextSwitchesPerSec = base.System.ContextSwitchesPerSec * f
		s.System.InterruptsPerSec = base.System.InterruptsPerSec * (1.1 - f/2)
		s.Time = base.Time.Add(time.Duration(i-n+1) * time.Second)
		out[i] = s
	}
	return out
}
