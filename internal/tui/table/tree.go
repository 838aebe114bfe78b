package table

import (
	"maps"
	"math"
	"slices"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
)

// The tree (htop's F5): each process's row, then its threads beneath it,
// indented. Processes sort among themselves and threads within their
// process, by the same column, so a busy process's busiest thread is where
// one looks first. A process folds away its threads (← and →).

// SetTree turns the process → threads tree on or off. It is a view of
// thread rows: on, it leaves the process and cgroup views and grouping.
func (m *Model) SetTree(on bool) {
	if m.tree == on && (!on || !m.processes && !m.cgroups && !m.grouped) {
		return
	}
	m.tree = on
	if on {
		m.processes, m.cgroups, m.grouped = false, false, false
	}
	m.rebuild()
}

// Tree says whether thread rows show as a process → threads tree.
func (m Model) Tree() bool { return m.tree }

// treeShown says whether the rows are the tree now: grouping or another
// row kind, chosen after F5, set it aside until they are left.
func (m Model) treeShown() bool { return m.tree && !m.processes && !m.cgroups && !m.grouped }

// Fold folds (open false) or unfolds the selected row's process in the
// tree. On a thread row, folding selects its process, whose row then
// stands for it. It reports whether anything changed.
func (m *Model) Fold(open bool) bool {
	if m.cgroups {
		return m.foldGroup(open)
	}
	r, ok := m.Selected()
	if !m.treeShown() || !ok || r.PID <= 0 {
		return false
	}
	if m.folded[r.PID] == !open {
		if !open && r.Depth > 0 {
			m.Select(ProcessKey(r.PID))
			return true
		}
		return false
	}
	// Copied, not changed in place: earlier copies of the model share the
	// map and must keep what they showed.
	f := maps.Clone(m.folded)
	if f == nil {
		f = map[int]bool{}
	}
	if open {
		delete(f, r.PID)
	} else {
		f[r.PID] = true
	}
	m.folded = f
	if !open {
		m.selected, m.picked = ProcessKey(r.PID), true
	}
	m.rebuild()
	return true
}

// treeRows lays out threads (already filtered) under their processes.
// procs are the snapshot's process rows; a process without one (its
// threads alone passed a cgroup filter) gets a row summed from them.
func (m *Model) treeRows(threads []Row, procs []model.ProcessRates) []Row {
	byPID := map[int][]Row{}
	for _, t := range threads {
		byPID[t.PID] = append(byPID[t.PID], t)
	}
	parents := make([]Row, 0, len(byPID))
	for _, p := range processRows(procs, m.load) {
		if _, ok := byPID[p.PID]; ok {
			parents = append(parents, p)
		}
	}
	for pid, ts := range byPID {
		if slices.ContainsFunc(parents, func(p Row) bool { return p.PID == pid }) {
			continue
		}
		p := Row{Key: ProcessKey(pid), PID: pid, Count: len(ts), Comm: ts[0].ProcessComm, Cgroup: ts[0].Cgroup}
		for j := range fields.Thread {
			f := &fields.Thread[j]
			switch {
			case !f.Numeric():
			case !f.Summed():
				p.Vals[f.ID] = math.NaN()
			default:
				for _, t := range ts {
					if f.Combine == fields.Max {
						p.Vals[f.ID] = max(p.Vals[f.ID], t.Vals[f.ID])
					} else {
						p.Vals[f.ID] += t.Vals[f.ID]
					}
				}
			}
		}
		for _, t := range ts {
			p.Load = p.Load || t.Load
			if t.Hot && !p.Hot {
				p.Hot, p.Why = true, t.Why
			}
		}
		if p.Comm == "" {
			p.Comm = ts[0].Comm
		}
		parents = append(parents, p)
	}
	m.sortRows(parents)
	out := make([]Row, 0, len(parents)+len(threads))
	for _, p := range parents {
		ts := byPID[p.PID]
		p.Folded = m.folded[p.PID]
		p.TID = 0
		out = append(out, p)
		if p.Folded {
			continue
		}
		m.sortRows(ts)
		for i, t := range ts {
			t.Depth = 1
			t.Last = i == len(ts)-1
			out = append(out, t)
		}
	}
	return out
}

// treeComm is a tree row's name with its place in the tree drawn before
// it: ▾/▸ for an open or folded process, ├/└ for its threads.
func treeComm(r Row) string {
	switch {
	case r.Depth > 0 && r.Last:
		return "└ " + r.Comm
	case r.Depth > 0:
		return "├ " + r.Comm
	case r.Folded:
		return "▸ " + r.Comm
	}
	return "▾ " + r.Comm
}

// TreeShown says whether the rows are the tree now (Tree, and no other
// row kind or grouping chosen since).
func (m Model) TreeShown() bool { return m.treeShown() }
