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
