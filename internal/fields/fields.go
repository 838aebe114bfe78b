// Package fields describes each per-thread column once: its title and
// width in the TUI table, when it drops on a narrow screen, its value and
// sort order, its batch text header and JSON key, and, for a raw kernel
// counter, how a recording carries it. The TUI table, the batch writers
// and the record codec read this table instead of each spelling out the
// columns, so a new numeric column is one entry here (and, for a counter
// the kernel did not give before, its reader and its name in model.Counter).
//
// The other row kinds have their tables too (rows.go): Process, Cgroup and
// Wakeup list the columns of process, cgroup and wake-up pair rows for
// batch text and JSON, and which thread column the TUI draws each value
// in.
//
// The identity and text columns (PID, TID, COMM, CPUS, WHY) are here too,
// for their place, titles and keys, but each view draws their cells
// itself: a process row's TID column counts threads, a name group's PID
// is "×3", a load thread's reason says "load:". Every numeric column is
// drawn from Value alone.
package fields

import (
	"math"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// ID names a field; it indexes Thread and the views' per-row values.
type ID int

// The fields, in the order the TUI, text and JSON show them.
const (
	PID ID = iota
	TID
	Comm
	// Container and Pod name what runs in the thread's cgroup; the TUI
	// shows them only when some row has one.
	Container
	Pod
	Voluntary
	Involuntary
	Total
	CPU
	Wait
	Migrations
	CPUs
	Hot
	Reason
	EarlierWait
	WaitOn
	// WhyData is WHY as data (model.Why), for JSON only.
	WhyData
	// Count is the number of fields.
	Count
)

// Kind is how a view formats a field's value.
type Kind int

const (
	// Text fields are drawn by each view, by ID.
	Text Kind = iota
	// Rate is per second: thousands separators in the TUI.
	Rate
	// Percent is of one CPU or of the interval: one decimal in the TUI.
	Percent
)

// Combine is how a row that groups threads by name combines its members'
// values.
type Combine int

const (
	// Sum adds the members' values: rates, CPU time.
	Sum Combine = iota
	// Max keeps the busiest member's: a share of each thread's own
	// interval, whose sum past 100% would mean nothing.
	Max
)

// Field is one per-thread column.
type Field struct {
	ID   ID
	Kind Kind
	// Title is the TUI header, "" for a field the TUI does not show.
	// Width is its width in cells; MaxWidth, when above Width, lets it
	// take what the other columns leave, up to that. Right aligns it right.
	Title           string
	Width, MaxWidth int
	// Desc says in a few words what the column holds, for the panel
	// where columns are shown and hidden.
	Desc  string
	Right bool
	// Priority orders columns as the screen narrows: the higher, the
	// sooner a column drops.
	Priority int
	// Sortable columns can be the TUI's sort key; Ascending ones sort
	// smallest first (IDs and names), the rest busiest first.
	Sortable, Ascending bool
	// Value is a numeric field's value for one thread; nil for Text.
	// A process or cgroup row's value is its Process or Cgroup column's
	// drawn in this field (Column.Table); the fields no such column is
	// drawn in, the process and cgroup views leave out.
	Value func(*model.ThreadRates) float64
	// Combine is how a name group combines its members' values.
	Combine Combine
	// TextTitle is the batch text header, "" for a field text leaves out;
	// TextWidth its width, 0 for the last column, which is not padded;
	// TextLeft aligns it left. Numeric fields print two decimals.
	TextTitle string
	TextWidth int
	TextLeft  bool
	// JSON is the key in batch JSON, "" for none. A numeric field writes
	// its Value rounded to two decimals, left out when zero and OmitZero
	// is set; other fields write JSONValue, left out when it returns nil.
	JSON      string
	OmitZero  bool
	JSONValue func(*model.ThreadRates) any
}

// Shown says whether the TUI shows the field.
func (f *Field) Shown() bool { return f.Title != "" }

// Numeric says whether the field has a value every view draws alike.
func (f *Field) Numeric() bool { return f.Value != nil }

// Summed says whether process rows have the field: a column of Process is
// drawn in it.
func (f *Field) Summed() bool {
	for i := range Process {
		if Process[i].InTable && Process[i].Table == f.ID {
			return true
		}
	}
	return false
}

// Thread is every per-thread field, indexed by ID.
//
// WHY comes right after the identity columns in priority: the reason a row
// is hot is the point of the tool, so at 80 columns it keeps room for
// "preempted, wait 100%" and %CPU waits for a wider screen. MIGR/s is
// detail for a wide screen and drops first.
var Thread = [Count]Field{
	PID: {ID: PID, Desc: "process ID", Title: "PID", Width: 7, Right: true, Priority: 3, Sortable: true, Ascending: true,
		TextTitle: "PID", TextWidth: 8,
		JSON: "pid", JSONValue: func(t *model.ThreadRates) any { return t.PID }},
	TID: {ID: TID, Desc: "thread ID", Title: "TID", Width: 7, Right: true, Priority: 4, Sortable: true, Ascending: true,
		TextTitle: "TID", TextWidth: 8,
		JSON: "tid", JSONValue: func(t *model.ThreadRates) any { return t.TID }},
	Comm: {ID: Comm, Desc: "thread name", Title: "COMM", Width: 12, MaxWidth: 15, Priority: 2, Sortable: true, Ascending: true,
		TextTitle: "COMM", TextWidth: 16, TextLeft: true,
		JSON: "comm", JSONValue: func(t *model.ThreadRates) any { return t.Comm }},
	// The pod's column gives way before the numbers do; the container's
	// comes right after the thread's name: on a node, which service a hot
	// thread is is the first question.
	Container: {ID: Container, Desc: "container of its cgroup", Title: "CONTAINER", Width: 14, MaxWidth: 20, Priority: 5, Sortable: true, Ascending: true,
		JSON: "container", JSONValue: func(t *model.ThreadRates) any {
			if t.Container == nil {
				return nil // not a nil *JSONContainer: the row leaves the key out
			}
			return ContainerJSON(t.Container)
		}},
	Pod: {ID: Pod, Desc: "Kubernetes pod", Title: "POD", Width: 26, Priority: 10, Sortable: true, Ascending: true},
	Voluntary: {ID: Voluntary, Desc: "voluntary switches/s", Kind: Rate, Title: "CSW/s", Width: 7, Right: true, Priority: 6, Sortable: true,
		Value:     func(t *model.ThreadRates) float64 { return t.VoluntaryPerSec },
		TextTitle: "CSWCH/s", TextWidth: 11, JSON: "cswch_per_s"},
	Involuntary: {ID: Involuntary, Desc: "involuntary switches/s", Kind: Rate, Title: "NVCSW/s", Width: 7, Right: true, Priority: 7, Sortable: true,
		Value:     func(t *model.ThreadRates) float64 { return t.InvoluntaryPerSec },
		TextTitle: "NVCSWCH/s", TextWidth: 11, JSON: "nvcswch_per_s"},
	Total: {ID: Total, Desc: "all switches/s", Kind: Rate, Title: "TOTAL/s", Width: 8, Right: true, Priority: 1, Sortable: true,
		Value:     func(t *model.ThreadRates) float64 { return t.TotalPerSec() },
		TextTitle: "TOTAL/s", TextWidth: 11},
	CPU: {ID: CPU, Desc: "on a CPU (100 = one)", Kind: Percent, Title: "%CPU", Width: 5, Right: true, Priority: 8, Sortable: true,
		Value:     func(t *model.ThreadRates) float64 { return t.CPUPercent },
		TextTitle: "%CPU", TextWidth: 7, JSON: "cpu_pct"},
	Wait: {ID: Wait, Desc: "waiting for a CPU", Kind: Percent, Title: "WAIT%", Width: 5, Right: true, Priority: 9, Sortable: true, Combine: Max,
		Value:     func(t *model.ThreadRates) float64 { return t.WaitPercent },
		TextTitle: "WAIT%", TextWidth: 7, JSON: "wait_pct"},
	// Threads only: ProcessRates has no sum of it, Process no column.
	Migrations: {ID: Migrations, Desc: "moves between CPUs/s", Kind: Rate, Title: "MIGR/s", Width: 6, Right: true, Priority: 11, Sortable: true,
		Value:     func(t *model.ThreadRates) float64 { return t.PerSec[model.Migrations] },
		TextTitle: "MIGR/s", TextWidth: 8, JSON: "migrations_per_s"},
	CPUs: {ID: CPUs, Desc: "CPUs allowed, * pinned", Title: "CPUS", Width: 5, MaxWidth: 9, Priority: 10,
		TextTitle: "CPUS", TextWidth: 9, TextLeft: true,
		JSON: "cpus_allowed", JSONValue: func(t *model.ThreadRates) any { return t.CPUsAllowed }},
	Hot: {ID: Hot, JSON: "hot", JSONValue: func(t *model.ThreadRates) any { return t.Hot }},
	Reason: {ID: Reason, Desc: "why a hot row switches", Title: "WHY", Width: whyWidth, MaxWidth: 1 << 10, Priority: 5,
		TextTitle: "HOT", TextLeft: true,
		JSON: "reason", JSONValue: func(t *model.ThreadRates) any { return t.Why.String() }},
	// Run-queue wait the kernel reported in this interval that began
	// before it (model.ThreadRates.EarlierWait), in ms.
	EarlierWait: {ID: EarlierWait, JSON: "earlier_wait_ms", OmitZero: true,
		Value: func(t *model.ThreadRates) float64 { return float64(t.EarlierWait) / float64(time.Millisecond) }},
	// Reason → share of the looks that found the thread asleep; only for
	// threads that were looked at (the hottest blocking ones).
	WaitOn: {ID: WaitOn, JSON: "wait_on", JSONValue: waitOn},
	// The reason's parts, for programs that would otherwise take the
	// "reason" text apart; only on hot rows. A pointer, so that handing it
	// over boxes nothing.
	WhyData: {ID: WhyData, JSON: "why", JSONValue: func(t *model.ThreadRates) any {
		if !t.Why.Hot() {
			return nil
		}
		return &t.Why
	}},
}

// whyWidth holds the longest reason a thread row can have, and the
// remainder line's.
const whyWidth = max(len("preempted, wait 100%"), len(model.UnattributedWhy))

func waitOn(t *model.ThreadRates) any {
	if len(t.WaitOn) == 0 {
		return nil
	}
	m := make(map[string]float64, len(t.WaitOn))
	for _, w := range t.WaitOn {
		m[w.Reason] = math.Round(w.Share*100) / 100
	}
	return m
}

// Counter is how a recording carries one of the model's per-thread
// counters (model.Counter), beyond those the codec has named since format
// 1 (switches, run and wait time, timeslices). Each is one more optional
// field, which a reader without it skips, so adding one keeps the
// format's version: as a delta (absolute for a new task) in task message
// field TaskField, and as one more column of the packed counters of known
// tasks, after the named ones, in the order of model.Counter. A task field
// number, once used, is never reused, and a counter, once recorded, keeps
// its place in model.Counter.
type Counter struct {
	// Name says what the counter is, for errors and the format's doc.
	Name string
	// TaskField is the task message's field number; 16 on are free.
	TaskField int
}

// Counters has an entry for each model.Counter, at its index.
var Counters = [model.NumCounters]Counter{
	model.Migrations: {Name: "migrations", TaskField: 16},
}

// JSONContainer is what runs in a row's cgroup, in every JSON row that has
// one (threads, processes, cgroups). Its keys are the ones cAdvisor and
// kube-state-metrics label series with, so that rows join with theirs.
type JSONContainer struct {
	Runtime   string `json:"runtime,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	PodUID    string `json:"pod_uid,omitempty"`
	QoS       string `json:"qos,omitempty"`
}

// ContainerJSON is c's JSON object, nil (left out) for none.
func ContainerJSON(c *model.Container) *JSONContainer {
	if c == nil {
		return nil
	}
	return &JSONContainer{c.Runtime, c.ID, c.Name, c.Pod, c.Namespace, c.PodUID, c.QoS}
}
