package model

import (
	"slices"
	"strings"
)

// Container is what runs in a cgroup, as the node names it: a container of
// a runtime, a pod of the kubelet, or both. Every string is clean (safe to
// print) and bounded in length: the resolver (internal/containers) and a
// recording's reader make it so where it enters. A Container is never
// changed once made, so rows of any number of snapshots may point at it.
type Container struct {
	// Runtime is "docker", "containerd", "crio", "podman" or "" when the
	// cgroup's name does not say (the kubelet's cgroupfs driver names a
	// container by its bare ID).
	Runtime string
	// ID is the container's full ID; "" for a pod's own cgroup.
	ID string
	// Name is the container's name (the kubelet's container name for a
	// pod's container, docker's or podman's name otherwise); "" when
	// unknown.
	Name string
	// Pod and Namespace name the pod; PodUID and QoS come from the cgroup
	// path ("guaranteed", "burstable" or "besteffort"). All "" outside a
	// pod, and Pod and Namespace "" when the node holds no name for it.
	Pod, Namespace, PodUID, QoS string

	// Title is the one-line name of what runs in the cgroup:
	// "namespace/pod/container", "namespace/pod" for the pod's own cgroup,
	// "name" or "runtime shortid" for a container outside any pod. Seal
	// makes it, once, so that no tick formats one.
	Title string
}

// Seal returns a shared copy of c with its Title made. Every Container that
// rows point at is made with it.
func Seal(c Container) *Container {
	c.Title = c.makeTitle()
	return &c
}

// ShortID is how many hex digits of a container ID are shown, as docker ps
// does.
const ShortID = 12

// Short is the container's ID cut to ShortID.
func (c *Container) Short() string {
	if len(c.ID) > ShortID {
		return c.ID[:ShortID]
	}
	return c.ID
}

// Label is the container's name for a table cell: its name, else its
// short ID, else "" (a pod's own cgroup).
func (c *Container) Label() string {
	if c == nil {
		return ""
	}
	if c.Name != "" {
		return c.Name
	}
	return c.Short()
}

// PodLabel is the pod's name, else its short UID, else "".
func (c *Container) PodLabel() string {
	switch {
	case c == nil:
		return ""
	case c.Pod != "":
		return c.Pod
	case len(c.PodUID) > 8:
		return "pod " + c.PodUID[:8]
	}
	return c.PodUID
}

func (c *Container) makeTitle() string {
	if c.PodUID != "" {
		t := c.PodLabel()
		if c.Namespace != "" {
			t = c.Namespace + "/" + t
		}
		if l := c.Label(); l != "" {
			t += "/" + l
		}
		return t
	}
	if c.Name != "" {
		return c.Name
	}
	if c.Runtime != "" {
		return c.Runtime + " " + c.Short()
	}
	return "container " + c.Short()
}

// attachContainers points each thread and process row at what runs in its
// cgroup. Rows and cgroups are in PID order and path order: a process's
// cgroup is looked up once, not per thread.
func attachContainers(threads []ThreadRates, procs []ProcessRates, cur *Sample) {
	any := false
	for i := range cur.Cgroups {
		if cur.Cgroups[i].Container != nil {
			any = true
			break
		}
	}
	if !any {
		return
	}
	last, lastC := "", (*Container)(nil)
	find := func(path string) *Container {
		if path == "" {
			return nil
		}
		if path == last {
			return lastC
		}
		i, ok := slices.BinarySearchFunc(cur.Cgroups, path, func(c CgroupCounters, p string) int { return strings.Compare(c.Path, p) })
		last, lastC = path, nil
		if ok {
			lastC = cur.Cgroups[i].Container
		}
		return lastC
	}
	for i := range threads {
		threads[i].Container = find(threads[i].Cgroup)
	}
	for i := range procs {
		procs[i].Container = find(procs[i].Cgroup)
	}
}
