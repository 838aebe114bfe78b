package table

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
)

// The third row kind: one row per cgroup (container, pod, systemd unit).
// It reuses the columns: PID holds the process count, TID the thread
// count, COMM the group's name, WAIT% the share of CFS periods throttled
// and CPUS the quota in CPUs.

// Mode is what a table row stands for; H cycles through them.
type Mode int

// The row kinds, in H's order.
const (
	ModeThreads Mode = iota
	ModeProcesses
	ModeCgroups
)

// CgroupKey is the selection key of a cgroup row.
func CgroupKey(path string) string { return "c" + path }

func cgroupRows(cs []model.CgroupRates) []Row {
	rows := make([]Row, 0, len(cs))
	for _, c := range cs {
		r := Row{
			Key: CgroupKey(c.Path), PID: c.Processes, TID: c.Threads, Count: c.Threads, Comm: c.Name, Cgroup: c.Path,
			NoWait: !c.HasThrottling, Hot: c.Hot, Why: c.Why, Container: c.Container,
		}
		cgroupVals(&r, &c)
		if c.LimitCPUs > 0 {
			r.CPUs = strconv.FormatFloat(c.LimitCPUs, 'f', -1, 64)
		}
		rows = append(rows, r)
	}
	return rows
}

// Mode is the current row kind.
func (m Model) Mode() Mode {
	switch {
	case m.cgroups:
		return ModeCgroups
	case m.processes:
		return ModeProcesses
	}
	return ModeThreads
}

// CycleMode moves to the next row kind: threads, processes, cgroups.
func (m *Model) CycleMode() {
	switch m.Mode() {
	case ModeThreads:
		m.SetProcesses(true)
	case ModeProcesses:
		m.SetCgroups(true)
	default:
		m.SetProcesses(false)
	}
}

// SetCgroups switches to cgroup rows, or back to thread rows.
func (m *Model) SetCgroups(on bool) {
	if m.cgroups == on {
		return
	}
	m.cgroups, m.processes = on, false
	m.selected, m.cursor, m.offset, m.picked = "", 0, 0, false
	m.rebuild()
}

// Cgroups says whether rows are cgroups.
func (m Model) Cgroups() bool { return m.cgroups }

// SetCgroupFilter shows only the threads or processes of the cgroup at
// path; "" shows all.
func (m *Model) SetCgroupFilter(path string) {
	m.cgroupFilter = path
	m.rebuild()
}

// CgroupFilter is the cgroup path rows are limited to, "" for none.
func (m Model) CgroupFilter() string { return m.cgroupFilter }

// cgroupTitle is a column's title in cgroup mode, "" to keep its own.
func cgroupTitle(c Column) string {
	switch c {
	case ColPID:
		return "PROCS"
	case ColTID:
		return "THR"
	case ColComm:
		return "CGROUP"
	case ColWait:
		return "THRT%"
	case ColCPUs:
		return "LIMIT"
	}
	return ""
}

// cgroupCell draws the cells that differ in cgroup mode; ok is false for
// the others.
func cgroupCell(r Row, c Column) (string, bool) {
	switch c {
	case ColPID:
		return strconv.Itoa(r.PID), true
	case ColTID:
		return strconv.Itoa(r.TID), true
	case ColWait:
		if r.NoWait {
			return "-", true
		}
		return format.Percent(r.Vals[fields.Wait]), true
	case ColCPUs:
		return r.CPUs, true
	}
	return "", false
}

// groupKey is the selection key of a namespace's or a pod's row in the
// cgroup view; no cgroup path (they start with "/") makes it.
func groupKey(ns, podUID string) string {
	if podUID != "" {
		return "cpod:" + podUID
	}
	return "cns:" + ns
}

func groupRow(g model.CgroupGroup) Row {
	r := Row{
		Key: groupKey(g.Namespace, g.PodUID), PID: g.Processes, TID: g.Threads, Count: g.Members, Comm: g.Name,
		NoWait: !g.HasThrottling, Hot: g.Hot, Why: g.Why,
	}
	// The level's sums, drawn by the same columns as a cgroup's.
	sums := model.CgroupRates{VoluntaryPerSec: g.VoluntaryPerSec, InvoluntaryPerSec: g.InvoluntaryPerSec,
		CPUPercent: g.CPUPercent, HasThrottling: g.HasThrottling, ThrottledPercent: g.ThrottledPercent}
	cgroupVals(&r, &sums)
	return r
}

// cgroupVals fills a row's values from the cgroup columns the table shows
// (package fields), NaN in the others: a field the cgroup view has no
// meaning for.
func cgroupVals(r *Row, c *model.CgroupRates) {
	for i := range r.Vals {
		r.Vals[i] = math.NaN()
	}
	for j := range fields.Cgroup {
		if col := &fields.Cgroup[j]; col.InTable {
			r.Vals[col.Table] = col.Value(c)
		}
	}
}

// cgroupTree lays out cgroup rows (already filtered) as the tree
// namespace → pod → container, with the sums the model made for the
// upper levels (groups). A namespace or pod shows when one of its
// containers does; cgroups outside any pod stay at the top level among
// the namespaces. Each level sorts by the sort column on its own, as the
// process tree does. Under a pod a container goes by its own name: the
// rows above name the pod and namespace.
func (m *Model) cgroupTree(leaves []Row, groups []model.CgroupGroup) []Row {
	if len(groups) == 0 {
		m.sortRows(leaves)
		return leaves
	}
	under := map[string][]Row{}
	var top []Row
	for _, r := range leaves {
		c := r.Container
		if c == nil || c.PodUID == "" {
			top = append(top, r)
			continue
		}
		r.Parent = groupKey(c.Namespace, c.PodUID)
		if r.Comm = c.Label(); r.Comm == "" {
			r.Comm = "(pod)" // the pod's own cgroup
		}
		under[r.Parent] = append(under[r.Parent], r)
	}
	// Pods first: a namespace shows when one of its pods does.
	for _, g := range groups {
		if g.PodUID == "" || len(under[groupKey(g.Namespace, g.PodUID)]) == 0 {
			continue
		}
		r := groupRow(g)
		if g.Namespace == "" {
			top = append(top, r)
			continue
		}
		r.Parent = groupKey(g.Namespace, "")
		under[r.Parent] = append(under[r.Parent], r)
	}
	for _, g := range groups {
		if g.PodUID == "" && len(under[groupKey(g.Namespace, "")]) > 0 {
			top = append(top, groupRow(g))
		}
	}
	out := make([]Row, 0, len(leaves)+len(groups))
	var lay func(rows []Row, depth int, indent string)
	lay = func(rows []Row, depth int, indent string) {
		m.sortRows(rows)
		for i, r := range rows {
			r.Depth, r.Last = depth, i == len(rows)-1
			r.Branch = len(under[r.Key]) > 0
			r.Folded = r.Branch && m.foldedGroups[r.Key]
			switch {
			case depth > 0 && r.Last:
				r.Mark = indent + "└"
			case depth > 0:
				r.Mark = indent + "├"
			}
			switch {
			case r.Folded:
				r.Mark += "▸ "
			case r.Branch:
				r.Mark += "▾ "
			case depth > 0:
				r.Mark += " "
			}
			out = append(out, r)
			if r.Branch && !r.Folded {
				next := indent + "│ "
				if depth == 0 {
					next = ""
				} else if r.Last {
					next = indent + "  "
				}
				lay(under[r.Key], depth+1, next)
			}
		}
	}
	lay(top, 0, "")
	return out
}

// foldGroup folds (open false) or unfolds the selected namespace or pod
// in the cgroup view. On a row under one, folding selects the row above,
// which then stands for it. It reports whether anything changed.
func (m *Model) foldGroup(open bool) bool {
	r, ok := m.Selected()
	if !ok {
		return false
	}
	if !r.Branch || m.foldedGroups[r.Key] == !open {
		if !open && r.Parent != "" {
			m.Select(r.Parent)
			return true
		}
		return false
	}
	// Copied, not changed in place: earlier copies of the model share the
	// map and must keep what they showed.
	f := maps.Clone(m.foldedGroups)
	if f == nil {
		f = map[string]bool{}
	}
	if open {
		delete(f, r.Key)
	} else {
		f[r.Key] = true
	}
	m.foldedGroups = f
	m.rebuild()
	return true
}

// Foldable says whether ← and → fold rows now: the process tree, or the
// cgroup view when it has namespaces and pods.
func (m Model) Foldable() bool {
	return m.treeShown() || m.cgroups && slices.ContainsFunc(m.rows, func(r Row) bool { return r.Branch })
}
