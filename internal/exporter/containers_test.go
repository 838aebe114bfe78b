package exporter

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/containers/nodetest"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// Real cgroups named as the kubelet names them, real processes in them and
// the node's files: the scrape labels each container's series with its
// namespace, pod and container, as cAdvisor does; the counters grow, and
// keep what a process that exited did.
func TestContainerSeries(t *testing.T) {
	cg := nodetest.NewCgroups(t)
	root := t.TempDir()
	seed := os.Getpid()%100000*10 + 3
	uid, id1, id2 := nodetest.UID(seed), nodetest.ID(seed), nodetest.ID(seed+1)
	nodetest.AddPod(t, root, nodetest.Pod{Namespace: "shop", Name: "web-1", UID: uid, Containers: map[string]string{"nginx": id1, "envoy": id2}})
	cg.Run(t, nodetest.SystemdPod("burstable", uid)+"/cri-containerd-"+id1+".scope")
	doomed := nodetest.SystemdPod("burstable", uid) + "/cri-containerd-" + id2 + ".scope"
	cg.Run(t, doomed)

	e, err := New(sampling(sampler.Config{Root: "/proc", HostRoot: root}))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.window = 0
	gather(t, e)
	time.Sleep(300 * time.Millisecond)
	fams := gather(t, e)
	for _, ctr := range []string{"nginx", "envoy"} {
		v, ok := value(fams, "ctxtop_container_context_switches_total", "namespace", "shop", "pod", "web-1", "container", ctr, "type", "voluntary")
		if !ok || v == 0 {
			t.Errorf("%s: switches %v (served %v), want some", ctr, v, ok)
		}
		if n, ok := value(fams, "ctxtop_container_threads", "namespace", "shop", "pod", "web-1", "container", ctr); !ok || n < 1 {
			t.Errorf("%s: threads %v (served %v), want at least 1", ctr, n, ok)
		}
	}
	before, _ := value(fams, "ctxtop_container_context_switches_total", "container", "envoy", "type", "voluntary")
	cg.Kill(t, doomed)
	fams = gather(t, e)
	after, ok := value(fams, "ctxtop_container_context_switches_total", "container", "envoy", "type", "voluntary")
	if !ok || after < before {
		t.Errorf("envoy after its process exited: %v (served %v), was %v: a counter must not go down", after, ok, before)
	}
	if n, _ := value(fams, "ctxtop_container_threads", "container", "envoy"); n != 0 {
		t.Errorf("envoy threads after exit %v, want 0", n)
	}
}

// Thousands of containers: the series stay within --max-containers plus
// the "other" sum, as documented.
func TestContainerSeriesBounded(t *testing.T) {
	cg := nodetest.NewCgroups(t)
	root := t.TempDir()
	const n, max = 12, 5
	seed := os.Getpid()%100000*10 + 500
	for i := range n {
		uid, id := nodetest.UID(seed+i), nodetest.ID(seed+i)
		nodetest.AddPod(t, root, nodetest.Pod{Namespace: "ns", Name: fmt.Sprintf("p%d", i), UID: uid, Containers: map[string]string{"c": id}})
		cg.Run(t, nodetest.CgroupfsPod("besteffort", uid)+"/"+id)
	}
	cfg := sampling(sampler.Config{Root: "/proc", HostRoot: root})
	cfg.MaxContainers = max
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.window = 0
	gather(t, e)
	time.Sleep(200 * time.Millisecond)
	fams := gather(t, e)
	f := fams["ctxtop_container_threads"]
	if f == nil {
		t.Fatal("no container series")
	}
	if got := len(f.GetMetric()); got != max+1 {
		t.Errorf("%d container series for %d containers, want %d and other", got, n, max)
	}
	if v, ok := value(fams, "ctxtop_container_threads", "container", "other"); !ok || v < n-max {
		t.Errorf("other: %v threads (served %v), want at least %d", v, ok, n-max)
	}
	if v, _ := value(fams, "ctxtop_exporter_groups_dropped", "level", "container"); v != n-max {
		t.Errorf("dropped containers %v, want %d", v, n-max)
	}
}

// The fixture tree's pod and Docker container, named by the fixture
// node's files.
func TestContainerSeriesFromFixture(t *testing.T) {
	e, err := New(sampling(sampler.Config{Root: filepath.Join(testutil.RepoRoot(), "testdata", "proc"),
		HostRoot: filepath.Join(testutil.RepoRoot(), "testdata", "node")}))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	fams := gather(t, e)
	for _, want := range [][]string{{"namespace", "shop", "pod", "web-7d9f", "container", "nginx"}, {"namespace", "", "pod", "", "container", "redis"}} {
		if _, ok := value(fams, "ctxtop_container_threads", want...); !ok {
			t.Errorf("no series %v", want)
		}
	}
	if n := len(fams["ctxtop_container_threads"].GetMetric()); n != 2 {
		t.Errorf("%d container series, want 2", n)
	}
	e2, err := New(sampling(sampler.Config{Root: filepath.Join(testutil.RepoRoot(), "testdata", "proc"), NoCgroups: true}))
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	if f := gather(t, e2)["ctxtop_container_threads"]; f != nil {
		t.Errorf("container series with NoCgroups: %v", f)
	}
}
