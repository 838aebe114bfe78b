package model

import (
	"fmt"
	"slices"
	"strings"
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
			HasThrottling: true, ThrottledPercent: 45, ThrottledMsPerSec: 400, LimitCPUs: 0.5, Hot: true, Why: Why{Kind: Throttled, Throttled: 45}},
		{Path: "/b", Name: "/b", Processes: 1, Threads: 2, VoluntaryPerSec: 1500, CPUPercent: 5, HasThrottling: true, Hot: true, Why: Why{Kind: Blocking}},
	}
	if diff := cmp.Diff(want, s.Cgroups); diff != "" {
		t.Errorf("cgroups (-want +got)\n%s", diff)
	}
	reasons := map[int]string{}
	for _, th := range s.Threads {
		if th.Hot {
			reasons[th.TID] = th.Why.String()
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

// BenchmarkComputeInto10kThreadsInCgroups is the quiet host of
// BenchmarkComputeInto10kThreads on a container host: 500 processes of 20
// threads, each process in a cgroup of its own, as a recording of an hour
// at 10,000 threads has them. Every thread is counted into its cgroup every
// interval.
func BenchmarkComputeInto10kThreadsInCgroups(b *testing.B) {
	prev, cur := tenThousand(100, 1e9)
	for _, s := range []*Sample{prev, cur} {
		s.Cgroups = s.Cgroups[:0]
		for i := range s.Tasks {
			t := &s.Tasks[i]
			t.PID = 1000 + i/20*20
			// The sampler reads a process's cgroup once for its threads.
			if i%20 == 0 {
				s.Cgroups = append(s.Cgroups, CgroupCounters{Path: fmt.Sprintf("/system.slice/svc-%d.service", t.PID)})
			}
			t.Cgroup = s.Cgroups[len(s.Cgroups)-1].Path
		}
		slices.SortFunc(s.Cgroups, func(a, b CgroupCounters) int { return strings.Compare(a.Path, b.Path) })
	}
	var s Snapshot
	b.ReportAllocs()
	for b.Loop() {
		ComputeInto(&s, prev, cur, Options{})
	}
}
