package tuitest

import (
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Wakeups is a fixed wake-up graph over Snapshot's threads: the pinned
// ping-pong pair, a cross-CPU pair in the pool with a slow tail, a timer
// and the idle task waking pool threads, a long name, and per-CPU switch
// rates.
func Wakeups() *model.Wakeups {
	return &model.Wakeups{
		Interval: time.Second,
		Pairs: []model.WakeupPair{
			{WakerPID: 4242, WakerTID: 4243, WakerComm: "pp-ping", WakeePID: 4242, WakeeTID: 4244, WakeeComm: "pp-pong", PerSec: 98_412, CrossCPUPercent: 0, LatencyP50Micros: 1.6, LatencyP99Micros: 3.4, Resolved: 100, Timed: 100},
			{WakerPID: 4242, WakerTID: 4244, WakerComm: "pp-pong", WakeePID: 4242, WakeeTID: 4243, WakeeComm: "pp-ping", PerSec: 98_398, CrossCPUPercent: 0.2, LatencyP50Micros: 1.5, LatencyP99Micros: 3.1, Resolved: 100, Timed: 100},
			{WakerPID: 901, WakerTID: 911, WakerComm: "pool-1-thread-1", WakeePID: 901, WakeeTID: 912, WakeeComm: "pool-1-thread-2", PerSec: 2_310, CrossCPUPercent: 99.1, LatencyP50Micros: 24.5, LatencyP99Micros: 1_480, Resolved: 100, Timed: 100},
			{WakerPID: 901, WakerTID: 912, WakerComm: "pool-1-thread-2", WakeePID: 901, WakeeTID: 911, WakeeComm: "pool-1-thread-1", PerSec: 2_290, CrossCPUPercent: 98.7, LatencyP50Micros: 22.5, LatencyP99Micros: 980, Resolved: 100, Timed: 100},
			{WakerPID: model.WakerTimer, WakerTID: model.WakerTimer, WakerComm: model.WakerTimerComm, WakeePID: 901, WakeeTID: 912, WakeeComm: "pool-1-thread-2", PerSec: 210, CrossCPUPercent: 0, LatencyP50Micros: 24.5, LatencyP99Micros: 1_480, Resolved: 100, Timed: 100},
			{WakerPID: 0, WakerTID: 0, WakerComm: "swapper/0", WakeePID: 901, WakeeTID: 913, WakeeComm: "pool-1-thread-3", PerSec: 35, CrossCPUPercent: 0, LatencyP50Micros: 8.2, LatencyP99Micros: 40, Resolved: 100, Timed: 100},
			{WakerPID: 777, WakerTID: 777, WakerComm: "a-process-with-", WakeePID: 1, WakeeTID: 1, WakeeComm: "systemd", PerSec: 1.5, CrossCPUPercent: 100, LatencyP50Micros: 12, LatencyP99Micros: 12, Resolved: 100, Timed: 100},
		},
		PerCPU: []model.CPUSchedRates{
			{SwitchesPerSec: 201_334, MigrationsPerSec: 12},
			{SwitchesPerSec: 4_210, MigrationsPerSec: 85},
		},
	}
}
