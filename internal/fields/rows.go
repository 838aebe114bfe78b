package fields

import "github.com/ctxtop/ctxtop/internal/model"

// The IDs of the columns only the other row kinds have; the ones they share
// with threads (PID, Comm, the rates) keep the thread's ID.
const (
	Threads ID = Count + iota
	Processes
	CgroupPath
	Throttled
	ThrottledMs
	Limit
	WakerPID
	WakerTID
	WakerComm
	WakeePID
	WakeeTID
	WakeeComm
	WakeupRate
	CrossCPU
	LatencyP50
	LatencyP99
)

// Text cells and JSON values of a Column, beyond the thread's kinds.
const (
	// Integer is a count or an ID: printed whole.
	Integer Kind = Percent + 1 + iota
	// Name is a name cell: made safe for a terminal and cut to the name
	// column's width in text; written as it is in JSON.
	Name
	// Micros is a latency in µs: two decimals in text like a rate, one
	// below 100 in the TUI (format.Micros).
	Micros
)

// Column is one column of a row kind whose rows are P, a pointer: a
// process, a cgroup, a wake-up pair. P is the pointer, not the struct,
// so that the code over every row kind is compiled once (pointers share
// one shape), not once per kind. Batch text and JSON draw those rows from Process, Cgroup
// and Wakeup as they draw threads from Thread, and the TUI takes the
// values it shows in its thread columns from the same entries.
type Column[P any] struct {
	ID   ID
	Kind Kind
	// Value is a numeric or Integer column's value; Known, when set, says
	// whether the row has one: text prints "-" and JSON null without.
	Value func(P) float64
	Known func(P) bool
	// Str is a Text or Name column's cell, in text and JSON alike.
	Str func(P) string
	// TextTitle is the batch text header, "" for a column text leaves
	// out; TextWidth its width, 0 for the last column, which is not
	// padded; TextLeft aligns it left; Gap sets it two blanks, not one,
	// after the column before. Numeric columns print two decimals.
	TextTitle string
	TextWidth int
	TextLeft  bool
	Gap       bool
	// JSON is the key in batch JSON, "" for none; JSONValue, for a column
	// that is neither a number nor a string, its value, left out when it
	// returns nil.
	JSON      string
	JSONValue func(P) any
	// Table is the TUI thread column the value is drawn in, for a row
	// the TUI shows in the thread columns; InTable says it has one.
	Table   ID
	InTable bool
	// Title and Width are the column in a TUI view of its own (the
	// wake-up view), "" for none; the higher Drop, the sooner it goes on
	// a narrow screen, 0 never.
	Title string
	Width int
	Drop  int
}

// Process is every column of a process row, in the order text and JSON
// show them.
var Process = [...]Column[*model.ProcessRates]{
	{ID: PID, Kind: Integer, TextTitle: "PID", TextWidth: 8, JSON: "pid",
		Value: func(p *model.ProcessRates) float64 { return float64(p.PID) }},
	{ID: Comm, Kind: Name, TextTitle: "COMM", TextWidth: 16, TextLeft: true, JSON: "comm",
		Str: func(p *model.ProcessRates) string { return p.Comm }},
	{ID: Threads, Kind: Integer, TextTitle: "THREADS", TextWidth: 7, JSON: "threads",
		Value: func(p *model.ProcessRates) float64 { return float64(p.Threads) }},
	{ID: Voluntary, Kind: Rate, TextTitle: "CSWCH/s", TextWidth: 11, JSON: "cswch_per_s", Table: Voluntary, InTable: true,
		Value: func(p *model.ProcessRates) float64 { return p.VoluntaryPerSec }},
	{ID: Involuntary, Kind: Rate, TextTitle: "NVCSWCH/s", TextWidth: 11, JSON: "nvcswch_per_s", Table: Involuntary, InTable: true,
		Value: func(p *model.ProcessRates) float64 { return p.InvoluntaryPerSec }},
	{ID: Total, Kind: Rate, TextTitle: "TOTAL/s", TextWidth: 11, Table: Total, InTable: true,
		Value: func(p *model.ProcessRates) float64 { return p.TotalPerSec() }},
	{ID: CPU, Kind: Percent, TextTitle: "%CPU", TextWidth: 7, JSON: "cpu_pct", Table: CPU, InTable: true,
		Value: func(p *model.ProcessRates) float64 { return p.CPUPercent }},
	{ID: Wait, Kind: Percent, TextTitle: "WAIT%", TextWidth: 7, Table: Wait, InTable: true,
		Value: func(p *model.ProcessRates) float64 { return p.WaitPercent }},
	{ID: Reason, TextTitle: "HOT", TextLeft: true, Gap: true,
		Str: func(p *model.ProcessRates) string { return hot(p.Hot, p.Why) }},
	{ID: Container, JSON: "container", JSONValue: func(p *model.ProcessRates) any {
		if p.Container == nil {
			return nil
		}
		return ContainerJSON(p.Container)
	}},
}

// hotWidth fits "throttled 100%": in the cgroup rows the group's name
// comes last, whole, as pidstat puts its Command.
const hotWidth = 14

// Cgroup is every column of a cgroup row, in the order text and JSON
// show them. The TUI shows its throttling in the WAIT% column.
var Cgroup = [...]Column[*model.CgroupRates]{
	{ID: CgroupPath, Kind: Text, JSON: "cgroup",
		Str: func(c *model.CgroupRates) string { return c.Path }},
	{ID: Comm, Kind: Text, JSON: "name",
		Str: func(c *model.CgroupRates) string { return c.Name }},
	{ID: Processes, Kind: Integer, TextTitle: "PROCS", TextWidth: 6, JSON: "processes",
		Value: func(c *model.CgroupRates) float64 { return float64(c.Processes) }},
	{ID: Threads, Kind: Integer, TextTitle: "THREADS", TextWidth: 7, JSON: "threads",
		Value: func(c *model.CgroupRates) float64 { return float64(c.Threads) }},
	{ID: Voluntary, Kind: Rate, TextTitle: "CSWCH/s", TextWidth: 11, JSON: "cswch_per_s", Table: Voluntary, InTable: true,
		Value: func(c *model.CgroupRates) float64 { return c.VoluntaryPerSec }},
	{ID: Involuntary, Kind: Rate, TextTitle: "NVCSWCH/s", TextWidth: 11, JSON: "nvcswch_per_s", Table: Involuntary, InTable: true,
		Value: func(c *model.CgroupRates) float64 { return c.InvoluntaryPerSec }},
	{ID: Total, Kind: Rate, TextTitle: "TOTAL/s", TextWidth: 11, Table: Total, InTable: true,
		Value: func(c *model.CgroupRates) float64 { return c.TotalPerSec() }},
	{ID: CPU, Kind: Percent, TextTitle: "%CPU", TextWidth: 7, JSON: "cpu_pct", Table: CPU, InTable: true,
		Value: func(c *model.CgroupRates) float64 { return c.CPUPercent }},
	// null when the group's cpu.stat could not be read.
	{ID: Throttled, Kind: Percent, TextTitle: "THRTL%", TextWidth: 7, JSON: "throttled_pct", Table: Wait, InTable: true,
		Value: func(c *model.CgroupRates) float64 { return c.ThrottledPercent }, Known: hasThrottling},
	{ID: ThrottledMs, Kind: Rate, TextTitle: "THRTLms/s", TextWidth: 9, JSON: "throttled_ms_per_s",
		Value: func(c *model.CgroupRates) float64 { return c.ThrottledMsPerSec }, Known: hasThrottling},
	{ID: Limit, Kind: Rate, TextTitle: "LIMIT", TextWidth: 6,
		Value: func(c *model.CgroupRates) float64 { return c.LimitCPUs },
		Known: func(c *model.CgroupRates) bool { return c.LimitCPUs > 0 }},
	{ID: Reason, TextTitle: "HOT", TextWidth: hotWidth, TextLeft: true,
		Str: func(c *model.CgroupRates) string { return hot(c.Hot, c.Why) }},
	// The name last, whole, as users name the group (the path when
	// nothing better is known).
	{ID: Comm, TextTitle: "CGROUP", TextLeft: true,
		Str: func(c *model.CgroupRates) string { return c.Name }},
	{ID: Container, JSON: "container", JSONValue: func(c *model.CgroupRates) any {
		if c.Container == nil {
			return nil
		}
		return ContainerJSON(c.Container)
	}},
}

func hasThrottling(c *model.CgroupRates) bool { return c.HasThrottling }

// Wakeup is every column of a wake-up pair row, in the order text, JSON
// and the TUI's wake-up view show them: who woke whom, how often, how many of those ran the
// wakee on another CPU, and the wakee's wake-to-run latency.
var Wakeup = [...]Column[*model.WakeupPair]{
	// No thread when the waker is an interrupt (waker_comm timer, irq,
	// softirq): "-" in text, null in JSON.
	{ID: WakerPID, Kind: Integer, Title: "PID", Width: 7, Drop: 3, TextTitle: "PID", TextWidth: 8, JSON: "waker_pid",
		Value: func(p *model.WakeupPair) float64 { return float64(p.WakerPID) }, Known: wakerIsThread},
	{ID: WakerTID, Kind: Integer, Title: "TID", Width: 7, Drop: 1, TextTitle: "TID", TextWidth: 8, JSON: "waker_tid",
		Value: func(p *model.WakeupPair) float64 { return float64(p.WakerTID) }, Known: wakerIsThread},
	{ID: WakerComm, Kind: Name, Title: "WAKER", Width: 15, TextTitle: "WAKER", TextWidth: 16, TextLeft: true, JSON: "waker_comm",
		Str: func(p *model.WakeupPair) string { return p.WakerComm }},
	{ID: WakeePID, Kind: Integer, Title: "PID", Width: 7, Drop: 3, TextTitle: "PID", TextWidth: 8, JSON: "wakee_pid",
		Value: func(p *model.WakeupPair) float64 { return float64(p.WakeePID) }},
	{ID: WakeeTID, Kind: Integer, Title: "TID", Width: 7, Drop: 1, TextTitle: "TID", TextWidth: 8, JSON: "wakee_tid",
		Value: func(p *model.WakeupPair) float64 { return float64(p.WakeeTID) }},
	{ID: WakeeComm, Kind: Name, Title: "WAKEE", Width: 15, TextTitle: "WAKEE", TextWidth: 16, TextLeft: true, JSON: "wakee_comm",
		Str: func(p *model.WakeupPair) string { return p.WakeeComm }},
	{ID: WakeupRate, Kind: Rate, Title: "WAKE/s", Width: 9, TextTitle: "WAKEUPS/s", TextWidth: 11, JSON: "per_s",
		Value: func(p *model.WakeupPair) float64 { return p.PerSec }},
	// null: none of the pair's wake-ups was resolved (or timed) yet.
	{ID: CrossCPU, Kind: Percent, Title: "XCPU%", Width: 6, TextTitle: "XCPU%", TextWidth: 7, JSON: "cross_cpu_pct",
		Value: func(p *model.WakeupPair) float64 { return p.CrossCPUPercent },
		Known: func(p *model.WakeupPair) bool { return p.CrossCPUKnown() }},
	{ID: LatencyP50, Kind: Micros, Title: "P50µs", Width: 8, Drop: 2, TextTitle: "P50us", TextWidth: 9, JSON: "latency_p50_us",
		Value: func(p *model.WakeupPair) float64 { return p.LatencyP50Micros }, Known: latencyKnown},
	{ID: LatencyP99, Kind: Micros, Title: "P99µs", Width: 8, Drop: 1, TextTitle: "P99us", TextWidth: 9, JSON: "latency_p99_us",
		Value: func(p *model.WakeupPair) float64 { return p.LatencyP99Micros }, Known: latencyKnown},
}

func wakerIsThread(p *model.WakeupPair) bool { return !p.WakerIsInterrupt() }
func latencyKnown(p *model.WakeupPair) bool  { return p.LatencyKnown() }

// hot is a row's HOT cell: its WHY when it is hot.
func hot(isHot bool, why model.Why) string {
	if !isHot {
		return ""
	}
	return why.String()
}
