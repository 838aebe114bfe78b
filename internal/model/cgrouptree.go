package model

// CgroupGroup sums the cgroups of one Kubernetes pod, or the pods of one
// namespace: the levels above the containers in the cgroup view's tree
// (namespace → pod → container). Any sink can show it; the figures are the
// sums of the member cgroups' rows, so a level adds up to what is under it.
type CgroupGroup struct {
	// Namespace is the pod's namespace, "" when the node holds no name for
	// it; PodUID is the pod's UID, "" for a namespace's sum.
	Namespace, PodUID string
	// Name is the namespace, or the pod's name (Container.PodLabel).
	Name string
	// Members is how many pods (a namespace) or cgroups (a pod) it sums.
	Members            int
	Processes, Threads int
	VoluntaryPerSec    float64
	InvoluntaryPerSec  float64
	CPUPercent         float64
	// HasThrottling says a member's throttling is known;
	// ThrottledPercent is the most throttled member's share (a pod is in
	// trouble when one of its containers is).
	HasThrottling    bool
	ThrottledPercent float64
	// Hot is true when a member is; Why is the first hot member's, in
	// the Snapshot's order (throttled first, then busiest).
	Hot bool
	Why Why
}

// TotalPerSec is voluntary plus involuntary switches per second.
func (g CgroupGroup) TotalPerSec() float64 { return g.VoluntaryPerSec + g.InvoluntaryPerSec }

// CgroupGroups sums cs (a Snapshot's Cgroups) by pod, and the pods by
// namespace. Each namespace comes before its pods, in the order their
// first member has in cs; a pod whose namespace is unknown has no
// namespace above it. Cgroups outside any pod (systemd units, containers
// without a pod) are in no group. It allocates per pod, not per task.
func CgroupGroups(cs []CgroupRates) []CgroupGroup {
	var out []CgroupGroup
	// Indexed, so that thousands of pods cost no more than a pass.
	type key struct{ ns, uid string }
	idx := map[key]int{}
	find := func(ns, uid string) int {
		if i, ok := idx[key{ns, uid}]; ok {
			return i
		}
		return -1
	}
	for i := range cs {
		c := &cs[i]
		if c.Container == nil || c.Container.PodUID == "" {
			continue
		}
		ns, uid := c.Container.Namespace, c.Container.PodUID
		if ns != "" && find(ns, "") < 0 {
			idx[key{ns, ""}] = len(out)
			out = append(out, CgroupGroup{Namespace: ns, Name: ns})
		}
		p := find(ns, uid)
		if p < 0 {
			p = len(out)
			idx[key{ns, uid}] = p
			out = append(out, CgroupGroup{Namespace: ns, PodUID: uid, Name: c.Container.PodLabel()})
			if ns != "" {
				out[find(ns, "")].Members++
			}
		}
		out[p].Members++
		out[p].add(c)
		if ns != "" {
			out[find(ns, "")].add(c)
		}
	}
	return out
}

func (g *CgroupGroup) add(c *CgroupRates) {
	g.Processes += c.Processes
	g.Threads += c.Threads
	g.VoluntaryPerSec += c.VoluntaryPerSec
	g.InvoluntaryPerSec += c.InvoluntaryPerSec
	g.CPUPercent += c.CPUPercent
	if c.HasThrottling {
		g.HasThrottling = true
		g.ThrottledPercent = max(g.ThrottledPercent, c.ThrottledPercent)
	}
	if c.Hot && !g.Hot {
		g.Hot, g.Why = true, c.Why
	}
}
