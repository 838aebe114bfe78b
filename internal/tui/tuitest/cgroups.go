package tuitest

import "github.com/ctxtop/ctxtop/internal/model"

// Cgroup paths of WithCgroups: the ping-pong in a systemd service, the java
// pool in a throttled Kubernetes container, the rest at the root.
const (
	ServiceCgroup = "/system.slice/pingpong.service"
	PodCgroup     = "/kubepods/burstable/pod1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a/3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"
)

// WithCgroups is Snapshot with cgroups and wait reasons: rows for three
// groups, one throttled, and the ping-pong threads' looks.
func WithCgroups() model.Snapshot {
	s := Snapshot()
	for i := range s.Threads {
		t := &s.Threads[i]
		switch t.PID {
		case 4242:
			t.Cgroup = ServiceCgroup
		case 901:
			t.Cgroup = PodCgroup
		default:
			t.Cgroup = "/"
		}
	}
	for i := range s.Processes {
		p := &s.Processes[i]
		switch p.PID {
		case 4242:
			p.Cgroup = ServiceCgroup
		case 901:
			p.Cgroup = PodCgroup
		default:
			p.Cgroup = "/"
		}
	}
	s.Threads[0].WaitOn = []model.WaitShare{{Reason: "pipe read", Share: 0.8}, {Reason: "futex wait", Share: 0.2}}
	s.Threads[0].Why.On = []model.WaitShare{{Reason: "pipe", Share: 0.8}, {Reason: "futex", Share: 0.2}}
	s.Threads[0].Wchan, s.Threads[0].Syscall = "anon_pipe_read", "0 0x5 0x7ffd1b5c8a60 0x1"
	s.Threads[3].Why = model.Why{Kind: model.Preempted, HasWait: true, Wait: 18, Throttled: 43, InThrottled: true}
	s.Cgroups = []model.CgroupRates{
		{Path: PodCgroup, Name: model.CgroupName(PodCgroup), Processes: 1, Threads: 40, VoluntaryPerSec: 6_504, InvoluntaryPerSec: 1_653,
			CPUPercent: 33.8, HasThrottling: true, ThrottledPercent: 43.2, ThrottledMsPerSec: 412, LimitCPUs: 0.5, Hot: true, Why: model.Why{Kind: model.Throttled, Throttled: 43}},
		{Path: ServiceCgroup, Name: model.CgroupName(ServiceCgroup), Processes: 1, Threads: 4, VoluntaryPerSec: 366_810, InvoluntaryPerSec: 21,
			CPUPercent: 82.4, HasThrottling: true, Hot: true, Why: model.Why{Kind: model.Blocking}},
		{Path: "/", Name: "/", Processes: 2, Threads: 2, VoluntaryPerSec: 4.4, InvoluntaryPerSec: 0.2, CPUPercent: 0.1},
	}
	return s
}
