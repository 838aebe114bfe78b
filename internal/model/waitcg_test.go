package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/waitreason"
)

func TestCgroupName(t *testing.T) {
	const id = "3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"
	tests := map[string]string{
		"":                            "",
		"/":                           "/",
		"/system.slice/nginx.service": "nginx.service",
		"/user.slice/user-1000.slice/user@1000.service":                   "user@1000.service",
		"/user.slice/user-1000.slice/user@1000.service/app.slice/a.scope": "a.scope",
		"/user.slice":                            "user.slice",
		"/docker/" + id:                          "docker 3f1c2b4d5e6f",
		"/system.slice/docker-" + id + ".scope":  "docker 3f1c2b4d5e6f",
		"/system.slice/crio-" + id + ".scope":    "crio 3f1c2b4d5e6f",
		"/machine.slice/libpod-" + id + ".scope": "podman 3f1c2b4d5e6f",
		"/kubepods/burstable/pod1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a/" + id:                                                                         "pod 1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a (burstable) 3f1c2b4d5e6f",
		"/kubepods/pod1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a/" + id:                                                                                   "pod 1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a (guaranteed) 3f1c2b4d5e6f",
		"/kubepods/besteffort/pod1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a":                                                                              "pod 1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a (besteffort)",
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1d2e3f4a_5b6c_7d8e_9f0a_1b2c3d4e5f6a.slice/cri-containerd-" + id + ".scope": "pod 1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a (burstable) 3f1c2b4d5e6f",
		"/kubepods.slice/kubepods-pod1d2e3f4a_5b6c_7d8e_9f0a_1b2c3d4e5f6a.slice":                                                                    "pod 1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a (guaranteed)",
		"/ctxtop-test-1234": "/ctxtop-test-1234",
		"/docker/notanid":   "/docker/notanid",
		"/evil?[2J/x":       "/evil?[2J/x", // as the sampler cleaned it
	}
	for in, want := range tests {
		if got := CgroupName(in); got != want {
			t.Errorf("CgroupName(%q) = %q, want %q", in, got, want)
		}
	}
}

func cgTask(pid, tid int, cg string, vol, invol, runNs uint64) TaskCounters {
	c := task(pid, tid, 5, vol, invol, runNs, 0)
	c.Cgroup = cg
	return c
}

func TestComputeCgroupRollupAndThrottling(t *testing.T) {
	prev := sample(0,
		cgTask(10, 10, "/a", 0, 0, 0), cgTask(10, 11, "/a", 0, 0, 0),
		cgTask(20, 20, "/a", 0, 0, 0),
		cgTask(30, 30, "/b", 0, 0, 0), cgTask(30, 31, "/b", 0, 0, 0),
		cgTask(40, 40, "/idle", 0, 0, 0))
	prev.Cgroups = []CgroupCounters{
		{Path: "/a", HasThrottling: true, Periods: 100, Throttled: 10, ThrottledNs: 1e9, LimitCPUs: 0.5},
		{Path: "/b", HasThrottling: true, Periods: 5, Throttled: 0},
		{Path: "/idle"},
	}
	cur := sample(2*time.Second,
		// /a: CPU-bound, preempted at every period end
		cgTask(10, 10, "/a", 0, 100, 5e8), cgTask(10, 11, "/a", 2, 60, 3e8),
		cgTask(20, 20, "/a", 0, 40, 2e8),
		// /b: one thread blocking, one idle
		cgTask(30, 30, "/b", 3000, 0, 1e8), cgTask(30, 31, "/b", 0, 0, 0),
		cgTask(40, 40, "/idle", 0, 0, 0))
	cur.Cgroups = []CgroupCounters{
		{Path: "/a", HasThrottling: true, Periods: 120, Throttled: 19, ThrottledNs: 1.8e9, LimitCPUs: 0.5},
		{Path: "/b", HasThrottling: true, Periods: 25, Throttled: 0},
		{Path: "/idle"},
	}
	s := Compute(prev, cur, Options{HotThreshold: 1000, ShortReason: waitreason.Short})
	want := []CgroupRates{
		{Path: "/a", Name: "/a", Processes: 2, Threads: 3, VoluntaryPerSec: 1, InvoluntaryPerSec: 100, CPUPercent: 50,
			HasThrottling: true, ThrottledPercent: 45, ThrottledMsPerSec: 400, LimitCPUs: 0.5, Hot: true, Reason: "throttled 45%"},
		{Path: "/b", Name: "/b", Processes: 1, Threads: 2, VoluntaryPerSec: 1500, CPUPercent: 5, HasThrottling: true, Hot: true, Reason: "blocking"},
	}
	if diff := cmp.Diff(want, s.Cgroups); diff != "" {
		t.Errorf("cgroups (-want +got)\n%s", diff)
	}
	reasons := map[int]string{}
	for _, th := range s.Threads {
		if th.Hot {
			reasons[th.TID] = th.Reason
		}
	}
	wantReasons := map[int]string{
		10: "preempted (cgroup throttled 45%)", 11: "preempted (cgroup throttled 45%)", 20: "preempted (cgroup throttled 45%)",
		30: "blocking, wait 0%",
	}
	if diff := cmp.Diff(wantReasons, reasons); diff != "" {
		t.Errorf("hot reasons (-want +got)\n%s", diff)
	}
}

func TestComputeCgroupsUnknownThrottling(t *testing.T) {
	prev := sample(0, cgTask(10, 10, "/a", 0, 0, 0))
	cur := sample(time.Second, cgTask(10, 10, "/a", 5, 5, 1e8))
	// A vanished or unreadable cgroup: known by name, no cpu.stat.
	prev.Cgroups = []CgroupCounters{{Path: "/a"}}
	cur.Cgroups = []CgroupCounters{{Path: "/a"}}
	s := Compute(prev, cur, Options{})
	want := []CgroupRates{{Path: "/a", Name: "/a", Processes: 1, Threads: 1, VoluntaryPerSec: 5, InvoluntaryPerSec: 5, CPUPercent: 10}}
	if diff := cmp.Diff(want, s.Cgroups); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	// Counters that went backwards: the group was made anew. No figure.
	prev.Cgroups = []CgroupCounters{{Path: "/a", HasThrottling: true, Periods: 50, Throttled: 40}}
	cur.Cgroups = []CgroupCounters{{Path: "/a", HasThrottling: true, Periods: 2, Throttled: 1}}
	s = Compute(prev, cur, Options{})
	if len(s.Cgroups) != 1 || s.Cgroups[0].HasThrottling || s.Cgroups[0].Hot {
		t.Errorf("reset counters gave %+v, want no throttling figure", s.Cgroups)
	}
	// No cgroups in the samples at all: no rows.
	s = Compute(sample(0, task(1, 1, 5, 0, 0, 0, 0)), sample(time.Second, task(1, 1, 5, 9, 9, 9, 0)), Options{})
	if s.Cgroups != nil {
		t.Errorf("no cgroups known, got %+v", s.Cgroups)
	}
}

func TestComputeWaitShares(t *testing.T) {
	prev := sample(0, task(1, 2, 5, 0, 0, 0, 0), task(1, 3, 5, 0, 0, 0, 0), task(1, 4, 5, 0, 0, 0, 0))
	cur := sample(time.Second, task(1, 2, 5, 5000, 10, 1e8, 0), task(1, 3, 5, 100, 5000, 1e8, 0), task(1, 4, 5, 5000, 0, 1e8, 0))
	cur.Waits = []WaitTally{
		{PID: 1, TID: 2, Looks: 10, Reasons: []ReasonCount{{"pipe read", 1}, {"futex wait", 6}, {"pipe write", 1}},
			Wchan: "futex_do_wait", Syscall: "202 0x1 0x80"},
		// preempted: shares kept, reason not rewritten
		{PID: 1, TID: 3, Looks: 10, Reasons: []ReasonCount{{"sleep", 2}}},
		// looked at, always running: no shares
		{PID: 1, TID: 4, Looks: 10},
	}
	s := Compute(prev, cur, Options{HotThreshold: 1000, ShortReason: waitreason.Short})
	got := map[int]ThreadRates{}
	for _, th := range s.Threads {
		got[th.TID] = th
	}
	if diff := cmp.Diff([]WaitShare{{"futex wait", 0.75}, {"pipe read", 0.125}, {"pipe write", 0.125}}, got[2].WaitOn); diff != "" {
		t.Errorf("TID 2 shares (-want +got)\n%s", diff)
	}
	if want := "blocking: futex 75%, pipe 25%"; got[2].Reason != want {
		t.Errorf("TID 2 reason %q, want %q", got[2].Reason, want)
	}
	if got[2].Wchan != "futex_do_wait" || got[2].Syscall != "202 0x1 0x80" {
		t.Errorf("TID 2 raw looks %q %q", got[2].Wchan, got[2].Syscall)
	}
	if want := "preempted, wait 0%"; got[3].Reason != want || len(got[3].WaitOn) != 1 {
		t.Errorf("TID 3 = %q %v, want %q with its share", got[3].Reason, got[3].WaitOn, want)
	}
	if want := "blocking, wait 0%"; got[4].Reason != want || got[4].WaitOn != nil {
		t.Errorf("TID 4 = %q %v, want %q and no shares", got[4].Reason, got[4].WaitOn, want)
	}
}

func TestBlockingReasonCutsSmallShares(t *testing.T) {
	got := blockingReason([]WaitShare{{"futex wait", 0.6}, {"sleep", 0.2}, {"epoll wait", 0.12}, {"poll", 0.05}, {"I/O", 0.03}}, waitreason.Short)
	if want := "blocking: futex 60%, sleep 20%, epoll 12%"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = blockingReason([]WaitShare{{"other: msleep", 1}}, waitreason.Short)
	if want := "blocking: msleep 100%"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
