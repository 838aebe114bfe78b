package sampler

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/containers/nodetest"
	"github.com/ctxtop/ctxtop/internal/model"
)

// Real cgroups named as the kubelet (both drivers, every QoS class) and
// the runtimes name them, real processes in them, and a node's files under
// a temporary root: every group the sampler reports is named.
func TestSampleNamesContainers(t *testing.T) {
	cg := nodetest.NewCgroups(t)
	root := t.TempDir()
	seed := os.Getpid() % 100000 * 10
	type want struct {
		pid   int
		title string
	}
	var wants []want
	for i, qos := range []string{"guaranteed", "burstable", "besteffort"} {
		uid, id1, id2 := nodetest.UID(seed+i), nodetest.ID(seed+2*i), nodetest.ID(seed+2*i+1)
		ns, pod := "ns"+qos, fmt.Sprintf("pod-%s", qos)
		nodetest.AddPod(t, root, nodetest.Pod{Namespace: ns, Name: pod, UID: uid, Containers: map[string]string{"app": id1, "side": id2}})
		wants = append(wants,
			want{cg.Run(t, nodetest.SystemdPod(qos, uid)+"/cri-containerd-"+id1+".scope"), ns + "/" + pod + "/app"},
			want{cg.Run(t, nodetest.CgroupfsPod(qos, uid)+"/"+id2), ns + "/" + pod + "/side"})
	}
	dock, pm := nodetest.ID(seed+10), nodetest.ID(seed+11)
	nodetest.AddDocker(t, root, dock, "redis", nil)
	nodetest.SetPodman(t, root, map[string]string{pm: "builder"})
	wants = append(wants, want{cg.Run(t, "/system.slice/docker-"+dock+".scope"), "redis"},
		want{cg.Run(t, "/machine.slice/libpod-"+pm+".scope"), "builder"})

	s, err := New(Config{Root: "/proc", HostRoot: root, NoTaskIter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var smp model.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	byPID := map[int]*model.Container{}
	for _, task := range smp.Tasks {
		for _, c := range smp.Cgroups {
			if c.Path == task.Cgroup {
				byPID[task.PID] = c.Container
			}
		}
	}
	for _, w := range wants {
		c := byPID[w.pid]
		if c == nil || c.Title != w.title {
			t.Errorf("PID %d: container %+v, want %q", w.pid, c, w.title)
		}
	}
	// And the rows the model makes from two samples carry them.
	prev := smp
	prev.Tasks = append([]model.TaskCounters(nil), smp.Tasks...)
	prev.Cgroups = append([]model.CgroupCounters(nil), smp.Cgroups...)
	time.Sleep(300 * time.Millisecond) // each shell wakes every 10 ms
	var cur model.Sample
	if err := s.Sample(&cur); err != nil {
		t.Fatal(err)
	}
	snap := model.Compute(&prev, &cur, model.Options{})
	named := map[string]bool{}
	for _, p := range snap.Processes {
		if p.Container != nil {
			named[p.Container.Title] = true
		}
	}
	for _, w := range wants {
		if !named[w.title] {
			t.Errorf("no process row names %q", w.title)
		}
	}
}
