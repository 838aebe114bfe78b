package table

import (
	"math"
	"strconv"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
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
		for i := range r.Vals {
			r.Vals[i] = math.NaN() // a field the cgroup view has no meaning for
		}
		r.Vals[fields.Voluntary], r.Vals[fields.Involuntary] = c.VoluntaryPerSec, c.InvoluntaryPerSec
		r.Vals[fields.Total], r.Vals[fields.CPU] = c.TotalPerSec(), c.CPUPercent
		r.Vals[fields.Wait] = c.ThrottledPercent
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
		return textutil.Percent(r.Vals[fields.Wait]), true
	case ColCPUs:
		return r.CPUs, true
	}
	return "", false
}
