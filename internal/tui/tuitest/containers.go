package tuitest

import "github.com/ctxtop/ctxtop/internal/model"

// PodContainer is what runs in PodCgroup in WithContainers.
var PodContainer = model.Seal(model.Container{Runtime: "containerd",
	ID: "3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b", Name: "payments-api",
	Pod: "checkout-7d9f8c-x2bq", Namespace: "shop", PodUID: "1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a", QoS: "burstable"})

// WithContainers is WithCgroups on a node: the java pool's group is a
// pod's container, named.
func WithContainers() model.Snapshot {
	s := WithCgroups()
	for i := range s.Threads {
		if s.Threads[i].Cgroup == PodCgroup {
			s.Threads[i].Container = PodContainer
		}
	}
	for i := range s.Processes {
		if s.Processes[i].Cgroup == PodCgroup {
			s.Processes[i].Container = PodContainer
		}
	}
	for i := range s.Cgroups {
		if s.Cgroups[i].Path == PodCgroup {
			s.Cgroups[i].Container, s.Cgroups[i].Name = PodContainer, PodContainer.Title
		}
	}
	return s
}

// WithPods is WithContainers on a busier node, for the cgroup view's
// tree: two namespaces, a pod of two containers beside a pod of one, a
// pod the node holds no name for, and a Podman container outside any pod
// among the systemd unit and the root.
func WithPods() model.Snapshot {
	s := WithContainers()
	ctr := func(runtime, id, name, pod, ns, uid string) *model.Container {
		return model.Seal(model.Container{Runtime: runtime, ID: id + "0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b", Name: name,
			Pod: pod, Namespace: ns, PodUID: uid, QoS: "burstable"})
	}
	proxy := ctr("containerd", "9a8b7c6d5e4f3a2b1c", "istio-proxy", PodContainer.Pod, "shop", PodContainer.PodUID)
	cart := ctr("containerd", "8b7c6d5e4f3a2b1c0d", "redis", "cart-5c6b-k8zt", "shop", "2e3f4a5b-6c7d-8e9f-0a1b-2c3d4e5f6a7b")
	dns := ctr("crio", "7c6d5e4f3a2b1c0d1e", "coredns", "coredns-6f4d-9qv2", "kube-system", "3f4a5b6c-7d8e-9f0a-1b2c-3d4e5f6a7b8c")
	anon := ctr("containerd", "6d5e4f3a2b1c0d1e2f", "", "", "", "4a5b6c7d-8e9f-0a1b-2c3d-4e5f6a7b8c9d")
	builder := ctr("podman", "5e4f3a2b1c0d1e2f3a", "builder", "", "", "")
	row := func(c *model.Container, path string, procs, threads int, vol, invol, cpu float64) model.CgroupRates {
		return model.CgroupRates{Path: path, Name: c.Title, Container: c, Processes: procs, Threads: threads,
			VoluntaryPerSec: vol, InvoluntaryPerSec: invol, CPUPercent: cpu, HasThrottling: true}
	}
	s.Cgroups = append(s.Cgroups,
		row(proxy, "/kubepods/burstable/pod"+proxy.PodUID+"/"+proxy.ID, 1, 3, 820, 40, 2.1),
		row(cart, "/kubepods/burstable/pod"+cart.PodUID+"/"+cart.ID, 1, 6, 2_100, 12, 4.0),
		row(dns, "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+dns.PodUID+".slice/crio-"+dns.ID+".scope", 1, 12, 310, 4, 0.6),
		row(anon, "/kubepods/burstable/pod"+anon.PodUID+"/"+anon.ID, 1, 1, 5, 0, 0),
		row(builder, "/machine.slice/libpod-"+builder.ID+".scope", 2, 9, 1_500, 20, 12.5),
	)
	return s
}
