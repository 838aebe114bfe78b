package sampler

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

const (
	fixtureService = "/system.slice/app-server.service"
	fixturePod     = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1d2e3f4a_5b6c_7d8e_9f0a_1b2c3d4e5f6a.slice/cri-containerd-3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b.scope"
	fixtureDocker  = "/docker/3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"
	fixtureID      = "3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"
)

// fixtureNode holds the node's files that name the fixture's pod and
// Docker container.
var fixtureNode = filepath.Join(testutil.RepoRoot(), "testdata", "node")

var (
	fixturePodCtr = model.Seal(model.Container{Runtime: "containerd", ID: fixtureID, Name: "nginx", Pod: "web-7d9f", Namespace: "shop",
		PodUID: "1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a", QoS: "burstable"})
	fixtureDockerCtr = model.Seal(model.Container{Runtime: "docker", ID: fixtureID, Name: "redis"})
)

func fixtureCgroups(t *testing.T, cgroupRoot string) (map[int]string, []model.CgroupCounters) {
	t.Helper()
	root := filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	s, err := New(Config{Root: root, CgroupRoot: cgroupRoot, HostRoot: fixtureNode})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var smp model.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	byTID := map[int]string{}
	for _, tc := range smp.Tasks {
		byTID[tc.TID] = tc.Cgroup
	}
	return byTID, smp.Cgroups
}

func TestCgroupsFromFixture(t *testing.T) {
	byTID, cgs := fixtureCgroups(t, filepath.Join(testutil.RepoRoot(), "testdata", "cgroup"))
	wantTasks := map[int]string{100: fixtureService, 101: fixtureService, 102: fixtureService, 200: fixturePod, 300: fixtureDocker, 400: "", 401: ""}
	if diff := cmp.Diff(wantTasks, byTID); diff != "" {
		t.Errorf("task cgroups (-want +got)\n%s", diff)
	}
	want := []model.CgroupCounters{
		{Path: fixtureDocker, Container: fixtureDockerCtr},
		{Path: fixturePod, HasThrottling: true, Periods: 90, Throttled: 3, ThrottledNs: 12000000, LimitCPUs: 2, Container: fixturePodCtr},
		{Path: fixtureService, HasThrottling: true, Periods: 412, Throttled: 187, ThrottledNs: 9329411000, LimitCPUs: 0.5},
	}
	if diff := cmp.Diff(want, cgs); diff != "" {
		t.Errorf("cgroup counters (-want +got)\n%s", diff)
	}
}

// A procfs tree with no cgroup file system: names, no figures, no error.
func TestCgroupsWithoutMount(t *testing.T) {
	byTID, cgs := fixtureCgroups(t, "")
	if byTID[100] != fixtureService {
		t.Errorf("thread 100 cgroup %q, want %q", byTID[100], fixtureService)
	}
	for _, c := range cgs {
		if c.HasThrottling || c.LimitCPUs != 0 {
			t.Errorf("no cgroup mount, yet %+v", c)
		}
	}
	if len(cgs) != 3 {
		t.Errorf("want the 3 groups named, got %+v", cgs)
	}
}

// NoCgroups (the exporter's setting) leaves every cgroup out.
func TestNoCgroups(t *testing.T) {
	root := filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	s := newSampler(t, Config{Root: root, CgroupRoot: filepath.Join(testutil.RepoRoot(), "testdata", "cgroup"), NoCgroups: true})
	var smp model.Sample
	for range 2 {
		mustSample(t, s, &smp)
	}
	if len(smp.Cgroups) != 0 || len(s.cg.byPath) != 0 {
		t.Errorf("cgroups read with NoCgroups: %+v", smp.Cgroups)
	}
	for _, tc := range smp.Tasks {
		if tc.Cgroup != "" {
			t.Errorf("task %d/%d in cgroup %q with NoCgroups", tc.PID, tc.TID, tc.Cgroup)
		}
	}
	if len(smp.Tasks) == 0 {
		t.Error("no tasks")
	}
}

// Processes that share a group give it one entry, pass after pass.
func TestSharedCgroupOnce(t *testing.T) {
	root := copyTree(t, filepath.Join(testutil.RepoRoot(), "testdata", "proc"))
	shared, err := os.ReadFile(filepath.Join(root, "200", "cgroup"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "300", "cgroup"), shared, 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSampler(t, Config{Root: root, CgroupRoot: filepath.Join(testutil.RepoRoot(), "testdata", "cgroup"), HostRoot: fixtureNode})
	var smp model.Sample
	for range 2 {
		mustSample(t, s, &smp)
		want := []model.CgroupCounters{
			{Path: fixturePod, HasThrottling: true, Periods: 90, Throttled: 3, ThrottledNs: 12000000, LimitCPUs: 2, Container: fixturePodCtr},
			{Path: fixtureService, HasThrottling: true, Periods: 412, Throttled: 187, ThrottledNs: 9329411000, LimitCPUs: 0.5},
		}
		if diff := cmp.Diff(want, smp.Cgroups); diff != "" {
			t.Errorf("cgroup counters (-want +got)\n%s", diff)
		}
		if len(s.cg.byPath) != 2 {
			t.Errorf("%d groups kept, want 2", len(s.cg.byPath))
		}
	}
}
