package table

import (
	"math"
	"strconv"
	"strings"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
)

// Row is one line of the table: a thread, a process, or a group of either.
type Row struct {
	// Key identifies the row across refreshes, so the selection can follow it.
	Key string
	PID int
	TID int
	// Count is the number of threads (process view) or members (groups).
	Count int
	Comm  string
	// ProcessComm is the owning process's name, for thread rows.
	ProcessComm string

	// Vals holds the row's value of each numeric field (package fields),
	// by ID; NaN where the row's kind has none.
	Vals   [fields.Count]float64
	CPUs   string
	Pinned bool
	Hot    bool
	// Why is rendered only when drawn (Why.String).
	Why model.Why
	// Load marks a thread of ctxtop's own load generator.
	Load bool
	// Grouped is true for a row that sums several by name pattern.
	Grouped bool
	// Cgroup is the path of the row's cgroup (thread and process rows) or
	// of the row itself (cgroup rows); NoWait marks a cgroup row whose
	// throttling is unknown.
	Cgroup string
	NoWait bool
	// In the tree: Depth 0 is a process, 1 one of its threads; Last marks
	// a process's last thread, Folded a process whose threads are hidden.
	Depth        int
	Last, Folded bool
	// In the cgroup view's tree (namespace → pod → container): Branch
	// marks a row with rows under it, Parent is the key of the row above
	// it, and Mark is the tree drawn before its name.
	Branch bool
	Parent string
	Mark   string
	// Container is what runs in the row's cgroup, nil for none.
	Container *model.Container
}

// podCell is the POD column's text: "namespace/pod".
func podCell(c *model.Container) string {
	if c == nil || c.PodUID == "" {
		return ""
	}
	if c.Namespace != "" {
		return c.Namespace + "/" + c.PodLabel()
	}
	return c.PodLabel()
}

// Total is voluntary plus involuntary switches per second.
func (r Row) Total() float64 { return r.Vals[fields.Total] }

// ThreadKey is the selection key of a thread row.
func ThreadKey(tid int) string { return "t" + strconv.Itoa(tid) }

// ProcessKey is the selection key of a process row.
func ProcessKey(pid int) string { return "p" + strconv.Itoa(pid) }

// isLoad says whether a thread belongs to the load generator.
type isLoad func(pid, tid int) bool

func threadRows(ts []model.ThreadRates, load isLoad) []Row {
	rows := make([]Row, 0, len(ts))
	for i := range ts {
		t := &ts[i]
		r := Row{
			Key: ThreadKey(t.TID), PID: t.PID, TID: t.TID, Count: 1, Comm: t.Comm, ProcessComm: t.ProcessComm,
			CPUs: t.CPUsAllowed, Pinned: t.Pinned, Hot: t.Hot, Why: t.Why, Cgroup: t.Cgroup, Container: t.Container,
			Load: load != nil && load(t.PID, t.TID),
		}
		for j := range fields.Thread {
			if f := &fields.Thread[j]; f.Numeric() {
				r.Vals[f.ID] = f.Value(t)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

func processRows(ps []model.ProcessRates, load isLoad) []Row {
	rows := make([]Row, 0, len(ps))
	for i := range ps {
		p := &ps[i]
		r := Row{
			Key: ProcessKey(p.PID), PID: p.PID, Count: p.Threads, Comm: p.Comm,
			Hot: p.Hot, Why: p.Why, Cgroup: p.Cgroup, Container: p.Container,
			Load: load != nil && load(p.PID, 0),
		}
		for j := range fields.Thread {
			if f := &fields.Thread[j]; f.Numeric() {
				r.Vals[f.ID] = math.NaN() // a thread's figure a process has no sum of
			}
		}
		for j := range fields.Process {
			if c := &fields.Process[j]; c.InTable {
				r.Vals[c.Table] = c.Value(p)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// group sums rows sharing a name pattern. Threads group within their
// process (a pool belongs to one program), except the kernel's thread
// families (kworker/*, ksoftirqd/*), each member of which is a process of
// its own; processes group across PIDs (worker-1, worker-2 ... as separate
// processes). A pattern with one member stays that member's own row, with
// its real name.
func group(rows []Row, processes bool) []Row {
	idx := map[string]int{}
	var out []Row
	var members []int
	var first []Row
	for _, r := range rows {
		pat := model.ThreadGroup(r.Comm)
		if processes {
			pat = model.ProcessGroup(r.Comm)
		}
		across := processes || model.GroupAcrossProcesses(pat)
		key := "g" + pat
		if !across {
			key = "g" + strconv.Itoa(r.PID) + "/" + pat
		}
		i, ok := idx[key]
		if !ok {
			idx[key] = len(out)
			g := r
			g.Key = key
			g.Comm = pat
			g.Count = 0
			g.Grouped = true
			// Summing below starts from zero.
			g.Vals = [fields.Count]float64{}
			out = append(out, g)
			members = append(members, 0)
			first = append(first, r)
			i = len(out) - 1
		}
		g := &out[i]
		members[i]++
		g.Count += max(r.Count, 1)
		for j := range fields.Thread {
			switch f := &fields.Thread[j]; {
			case !f.Numeric():
			case f.Combine == fields.Max:
				g.Vals[f.ID] = max(g.Vals[f.ID], r.Vals[f.ID])
			default:
				g.Vals[f.ID] += r.Vals[f.ID]
			}
		}
		if g.Container != r.Container {
			g.Container = nil // members in different containers
		}
		g.Pinned = g.Pinned || r.Pinned
		g.Load = g.Load || r.Load
		if r.Hot && (!g.Hot || !g.Why.Hot()) {
			g.Hot, g.Why = true, r.Why
		}
		if members[i] > 1 && !processes {
			g.TID = 0
			if across {
				g.PID = 0
			}
		}
		if members[i] > 1 && processes {
			g.PID = 0
		}
	}
	for i := range out {
		if members[i] == 1 {
			out[i] = first[i]
		}
	}
	return out
}

func matches(r Row, filter string) bool {
	if filter == "" {
		return true
	}
	f := strings.ToLower(filter)
	if strings.Contains(strings.ToLower(r.Comm), f) || strings.Contains(strings.ToLower(r.ProcessComm), f) {
		return true
	}
	// A pod's, a namespace's or a container's name finds its rows.
	if c := r.Container; c != nil && (strings.Contains(strings.ToLower(c.Name), f) ||
		strings.Contains(strings.ToLower(c.Pod), f) || strings.Contains(strings.ToLower(c.Namespace), f) ||
		strings.HasPrefix(c.ID, f)) {
		return true
	}
	return (r.PID > 0 && strings.HasPrefix(strconv.Itoa(r.PID), filter)) ||
		(r.TID > 0 && strings.HasPrefix(strconv.Itoa(r.TID), filter))
}
