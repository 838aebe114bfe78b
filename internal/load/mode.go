// Package load runs ctxtop's own ping-pong workloads: two sides that wake
// each other in turn, so the cost of a context switch can be measured and
// watched on any machine. Switch counts always come from the kernel's
// per-thread counters, never from an assumption about the protocol.
package load

import (
	"fmt"
	"io"
	"strings"
)

// Mode is a kind of workload, by name; its Info says what it is.
type Mode string

// Info describes one mode once: everything this package, ctxtop load,
// bench and the monitor's load panel ask of a mode. Each mode's Info is
// built in the mode's own file (pool.go describes pool), so a new mode is
// that file and its line in Modes, and nothing switches on mode names.
type Info struct {
	Mode Mode
	// Title is a few words on what runs, for the load panel.
	Title string
	// Help is the mode's paragraph in ctxtop load --help.
	Help string
	// Threaded: the mode runs Config.Threads independent threads instead of
	// ping-pong pairs; it takes no pairs, no round-trip budget and no
	// pinning, since it shows what the scheduler does with its threads.
	Threaded bool
	// NoSwitch: a round trip holds no context switch (a system call, a
	// goroutine hand-off); ns per switch means nothing there, and bench
	// shows the mode as a baseline.
	NoSwitch bool
	// Goroutines: the hand-offs run on goroutines, which have no threads of
	// their own, so switches are counted over every thread of the workload
	// process and pinning pins that whole process.
	Goroutines bool
	// MaxCPUs is how many CPUs it can be pinned to: 0 none, 1 for a mode
	// with one thread, 2 for one per side.
	MaxCPUs int
	// Walks: each side can walk a working set every round trip.
	Walks bool
	// TakesWork, TakesPeriod and TakesCPUQuota: the mode uses Config.Work,
	// Period and CPUQuota.
	TakesWork, TakesPeriod, TakesCPUQuota bool
	// Bench: ctxtop bench runs it; a mode that only makes sense watched
	// live (poll) is left to ctxtop load.
	Bench bool
	// Unit is what the mode counts: a round trip, a work item, a wake-up.
	Unit Unit

	// threadsPerUnit is how many threads of the workload process each
	// pair (or thread) holds a P with: GOMAXPROCS is sized from it.
	threadsPerUnit int
	// prepare readies a run of cfg (normalized) and returns what builds
	// each of its cfg.units() pairs or threads.
	prepare func(cfg Config) unitMaker
	// count is where a Summary keeps the units done.
	count func(*Summary) *uint64
	// note is printed under ctxtop load's headline; "" for none.
	note string
	// headline replaces the ping-pong headline; nil keeps it.
	headline func(Config) string
	// figures fills a summary's mode-specific figures from cfg and the run's
	// seconds; d is nil when the kernel's counts are unknown.
	figures func(s *Summary, cfg Config, secs float64, d *Counters)
	// writeFigures prints those figures in a threaded mode's summary.
	writeFigures func(w io.Writer, s Summary, secs float64)
}

// Unit names what a mode counts: one, many, and a column's short form.
type Unit struct{ One, Many, Short string }

// roundTrip is the ping-pong modes' unit.
func roundTrip() Unit { return Unit{One: "round trip", Many: "round trips", Short: "trip"} }

// unitMaker builds one pair, or one thread of a threaded mode.
type unitMaker func(p *pair) (pairImpl, error)

// roundTrips is where a ping-pong summary keeps its count.
func roundTrips(s *Summary) *uint64 { return &s.RoundTrips }

// Modes are every mode, in the order bench, the help and the load panel
// show them: from the cheapest hand-off to the dearest, then the thread
// experiments. The list is written out, not filled in by each file's
// init, so the order is stated once and nothing here can change later.
func Modes() []Info {
	return []Info{syscallInfo(), goroutineInfo(), futexInfo(), pipeInfo(), processInfo(), poolInfo(), pollInfo()}
}

// Lookup is m's Info; ok is false for a name no mode has.
func Lookup(m Mode) (info Info, ok bool) {
	for _, i := range Modes() {
		if i.Mode == m {
			return i, true
		}
	}
	return Info{}, false
}

// Info is m's description; the zero Info for a name no mode has.
func (m Mode) Info() Info {
	i, _ := Lookup(m)
	return i
}

// ParseMode accepts a mode's name.
func ParseMode(s string) (Mode, error) {
	if i, ok := Lookup(Mode(s)); ok {
		return i.Mode, nil
	}
	var names []string
	for _, i := range Modes() {
		names = append(names, string(i.Mode))
	}
	return "", fmt.Errorf("unknown mode %q (want one of %s)", s, strings.Join(names, ", "))
}

// ModeList names the modes that have a property, for a message: "pool
// mode", "futex, pipe and process modes".
func ModeList(has func(Info) bool) string {
	var names []string
	for _, i := range Modes() {
		if has(i) {
			names = append(names, string(i.Mode))
		}
	}
	switch len(names) {
	case 0:
		return "no mode"
	case 1:
		return names[0] + " mode"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " modes"
}

// threadName is the comm of a workload thread, at most 15 bytes as the
// kernel keeps them.
func threadName(side string, m Mode) string {
	n := side + "-" + string(m)
	if len(n) > 15 {
		n = n[:15]
	}
	return n
}
