package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ctxtop/ctxtop/internal/format"
)

// Pinning names a Config's CPUs as the reports show them.
func Pinning(cpus []int) string {
	switch len(cpus) {
	case 0:
		return "unpinned"
	case 1:
		return "both on CPU " + strconv.Itoa(cpus[0])
	}
	return fmt.Sprintf("CPUs %d and %d", cpus[0], cpus[1])
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// Report runs cfg in the foreground until it ends or ctx is done, printing
// a line per second and then the summary to w; asJSON prints the summary
// alone, as one JSON object.
func Report(ctx context.Context, w io.Writer, cfg Config, asJSON bool) error {
	run, err := Start(cfg)
	if err != nil {
		return err
	}
	if !asJSON {
		fmt.Fprintln(w, headline(run.Progress().Config)) // normalized: defaults filled in
		unit := cfg.Mode.Info().Unit
		if note := cfg.Mode.Info().note; note != "" {
			fmt.Fprintln(w, note)
		}
		fmt.Fprintf(w, "%8s %13s %10s %12s %13s %9s\n", "elapsed", unit.Many+"/s", "ns/"+unit.Short, "voluntary/s", "involuntary/s", "migr/s")
	}
	// JSON prints the summary alone: no per-second reads of the workload's
	// threads, and no wake-up every second to skip them.
	var tickC <-chan time.Time
	var last lineMark
	if !asJSON {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		tickC = tick.C
		last.read(run.Progress(), cfg.Mode)
	}
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-run.Done():
			break loop
		case <-tickC:
			var cur lineMark
			cur.read(run.Progress(), cfg.Mode)
			printLine(w, last, cur, cfg.units())
			last = cur
		}
	}
	sum := run.Stop()
	if asJSON {
		b, err := json.Marshal(sum)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	WriteSummary(w, sum)
	return nil
}

// lineMark is what a per-second line is the difference of.
type lineMark struct {
	at         time.Duration
	roundTrips uint64
	c          Counters
	ok         bool
}

// read sums the kernel counters of the workload's threads now, or of every
// thread of the workload process in goroutine mode, whose goroutines have
// no thread of their own.
func (m *lineMark) read(p Progress, mode Mode) {
	m.at, m.roundTrips = p.Elapsed, p.RoundTrips
	m.c = Counters{HasMigrations: true}
	m.ok = true
	add := func(c Counters, err error) {
		if err != nil {
			m.ok = false
			return
		}
		m.c = m.c.add(c)
	}
	if mode.Info().Goroutines {
		for _, pid := range p.PIDs {
			add(ProcessCounters(pid))
		}
		return
	}
	for _, t := range p.Threads {
		add(ReadCounters("/proc", t.PID, t.TID))
	}
}

// printLine prints the second from a to b; ns/trip is one pair's, as in
// the summary.
func printLine(w io.Writer, a, b lineMark, pairs int) {
	dt := (b.at - a.at).Seconds()
	if dt <= 0 {
		return
	}
	trips := b.roundTrips - a.roundTrips
	ns := "-"
	if trips > 0 {
		ns = format.Thousands(float64(b.at-a.at) * float64(pairs) / float64(trips))
	}
	vol, invol, migr := "-", "-", "-"
	if a.ok && b.ok && b.c.Voluntary >= a.c.Voluntary && b.c.Involuntary >= a.c.Involuntary {
		vol = format.Thousands(float64(b.c.Voluntary-a.c.Voluntary) / dt)
		invol = format.Thousands(float64(b.c.Involuntary-a.c.Involuntary) / dt)
		if a.c.HasMigrations && b.c.HasMigrations && b.c.Migrations >= a.c.Migrations {
			migr = format.Thousands(float64(b.c.Migrations-a.c.Migrations) / dt)
		}
	}
	fmt.Fprintf(w, "%7.1fs %13s %10s %12s %13s %9s\n", b.at.Seconds(), format.Thousands(float64(trips)/dt), ns, vol, invol, migr)
}

// WriteSummary prints a finished run's summary as ctxtop load ends with it.
func WriteSummary(w io.Writer, s Summary) {
	if s.Mode.Info().Threaded {
		writeThreaded(w, s)
		return
	}
	fmt.Fprintf(w, "\n%s, %s, %s, %.2fs: %s round trips\n", s.Mode, Pinning(s.CPUs), plural(s.Pairs, "pair"), s.DurationS, format.Thousands(float64(s.RoundTrips)))
	if s.RoundTrips == 0 {
		return
	}
	fmt.Fprintf(w, "  %s ns per round trip\n", format.Thousands(s.NsPerRoundTrip))
	if s.SwitchesUnknown != "" {
		writeSwitchesUnknown(w, s)
	} else if s.SwitchesCounted == CountedProcess {
		fmt.Fprintf(w, "  %s switches/s, kernel-counted over every thread of the workload process\n", format.Thousands(s.SwitchesPerSecond()))
		fmt.Fprintf(w, "    (%s voluntary, %s involuntary; %.4f per round trip): the Go runtime's\n",
			format.Thousands(float64(s.SwitchesVoluntary)), format.Thousands(float64(s.SwitchesInvoluntary)), s.SwitchesPerRoundTrip)
		fmt.Fprintln(w, "    idle Ps parking and being woken; the hand-offs never enter the kernel")
	} else {
		fmt.Fprintf(w, "  %.2f switches per round trip (kernel-counted: %s voluntary, %s involuntary)\n",
			s.SwitchesPerRoundTrip, format.Thousands(float64(s.SwitchesVoluntary)), format.Thousands(float64(s.SwitchesInvoluntary)))
	}
	if s.NsPerSwitch > 0 {
		fmt.Fprintf(w, "  %s ns per switch (round trip ÷ kernel-counted switches per round trip)\n", format.Thousands(s.NsPerSwitch))
	}
	if s.Migrations != nil {
		fmt.Fprintf(w, "  %s CPU migrations\n", format.Thousands(float64(*s.Migrations)))
	} else {
		fmt.Fprintln(w, "  CPU migrations: unknown (no se.nr_migrations in /proc/PID/task/TID/sched, or a thread's file could not be read)")
	}
	writeWalk(w, s)
	writeCrossCPU(w, s, "round trip")
	writeHW(w, s, "round trip")
	writeErr(w, s)
}

// writeSwitchesUnknown stands in for the switch figures when nobody read
// the kernel's counts: zeros there would pass for a run that never switched.
func writeSwitchesUnknown(w io.Writer, s Summary) {
	fmt.Fprintf(w, "  switches: unknown (%s)\n", s.SwitchesUnknown)
}
