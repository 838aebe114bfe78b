package model

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCgroupGroups(t *testing.T) {
	web := func(name string) *Container {
		return Seal(Container{Runtime: "containerd", ID: "id-" + name, Name: name, Pod: "web", Namespace: "shop", PodUID: "uid-web", QoS: "burstable"})
	}
	db := Seal(Container{Runtime: "crio", ID: "id-pg", Name: "postgres", Pod: "db", Namespace: "shop", PodUID: "uid-db"})
	dns := Seal(Container{Runtime: "containerd", ID: "id-dns", Name: "coredns", Pod: "coredns-1", Namespace: "kube-system", PodUID: "uid-dns"})
	// A pod the node holds no name for: no namespace above it.
	anon := Seal(Container{Runtime: "containerd", ID: "id-x", PodUID: "0123456789abcdef"})
	redis := Seal(Container{Runtime: "docker", ID: "id-redis", Name: "redis"})
	cs := []CgroupRates{
		{Path: "/a", Container: web("nginx"), Processes: 1, Threads: 4, VoluntaryPerSec: 100, InvoluntaryPerSec: 10, CPUPercent: 5,
			HasThrottling: true, ThrottledPercent: 40, Hot: true, Why: Why{Kind: Throttled, Throttled: 40}},
		{Path: "/system.slice/x.service", Processes: 2, Threads: 2, VoluntaryPerSec: 90},
		{Path: "/b", Container: dns, Processes: 1, Threads: 8, VoluntaryPerSec: 80},
		{Path: "/c", Container: web("envoy"), Processes: 2, Threads: 6, VoluntaryPerSec: 50, InvoluntaryPerSec: 5, CPUPercent: 2.5,
			HasThrottling: true, ThrottledPercent: 10, Hot: true, Why: Why{Kind: Blocking}},
		{Path: "/d", Container: redis, Processes: 1, Threads: 3, VoluntaryPerSec: 30},
		{Path: "/e", Container: db, Processes: 1, Threads: 1, VoluntaryPerSec: 20, InvoluntaryPerSec: 1},
		{Path: "/f", Container: anon, Processes: 1, Threads: 1, VoluntaryPerSec: 1},
	}
	want := []CgroupGroup{
		{Namespace: "shop", Name: "shop", Members: 2, Processes: 4, Threads: 11, VoluntaryPerSec: 170, InvoluntaryPerSec: 16, CPUPercent: 7.5,
			HasThrottling: true, ThrottledPercent: 40, Hot: true, Why: Why{Kind: Throttled, Throttled: 40}},
		{Namespace: "shop", PodUID: "uid-web", Name: "web", Members: 2, Processes: 3, Threads: 10, VoluntaryPerSec: 150, InvoluntaryPerSec: 15, CPUPercent: 7.5,
			HasThrottling: true, ThrottledPercent: 40, Hot: true, Why: Why{Kind: Throttled, Throttled: 40}},
		{Namespace: "kube-system", Name: "kube-system", Members: 1, Processes: 1, Threads: 8, VoluntaryPerSec: 80},
		{Namespace: "kube-system", PodUID: "uid-dns", Name: "coredns-1", Members: 1, Processes: 1, Threads: 8, VoluntaryPerSec: 80},
		{Namespace: "shop", PodUID: "uid-db", Name: "db", Members: 1, Processes: 1, Threads: 1, VoluntaryPerSec: 20, InvoluntaryPerSec: 1},
		{PodUID: "0123456789abcdef", Name: "pod 01234567", Members: 1, Processes: 1, Threads: 1, VoluntaryPerSec: 1},
	}
	if diff := cmp.Diff(want, CgroupGroups(cs)); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if got := CgroupGroups(cs[1:2]); got != nil {
		t.Errorf("groups of a systemd unit alone: %+v, want none", got)
	}
}

// Thousands of pods: one group per pod and per namespace, and the sums
// still add up.
func TestCgroupGroupsManyPods(t *testing.T) {
	var cs []CgroupRates
	for i := range 5000 {
		c := Seal(Container{ID: fmt.Sprint(i), Name: "c", Pod: fmt.Sprint("p", i), Namespace: fmt.Sprint("ns", i%10), PodUID: fmt.Sprint("uid", i)})
		cs = append(cs, CgroupRates{Path: fmt.Sprint("/", i), Container: c, Threads: 1, VoluntaryPerSec: 1})
	}
	gs := CgroupGroups(cs)
	if len(gs) != 5010 {
		t.Fatalf("%d groups, want 5,000 pods and 10 namespaces", len(gs))
	}
	for _, g := range gs {
		if g.PodUID == "" && (g.Members != 500 || g.Threads != 500 || g.VoluntaryPerSec != 500) {
			t.Errorf("namespace %s: %d pods, %d threads, %v/s; want 500 each", g.Name, g.Members, g.Threads, g.VoluntaryPerSec)
		}
	}
}
