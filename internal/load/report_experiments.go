package load

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/ctxtop/ctxtop/internal/format"
)

// headline is the first line ctxtop load prints: what runs.
func headline(cfg Config) string {
	if f := cfg.Mode.Info().headline; f != nil {
		return f(cfg)
	}
	h := fmt.Sprintf("%s, %s, %s", cfg.Mode, Pinning(cfg.CPUs), plural(max(cfg.Pairs, 1), "pair"))
	if cfg.WorkingSet > 0 {
		h += ", working set " + FormatSize(cfg.WorkingSet) + " per side"
	}
	return h
}

func quotaText(q float64) string {
	if q <= 0 {
		return ""
	}
	return ", CPU quota " + strconv.FormatFloat(q, 'g', -1, 64) + " CPUs"
}

// writeThreaded is the summary of a pool or a poller.
func writeThreaded(w io.Writer, s Summary) {
	cfg := Config{Mode: s.Mode, Threads: s.Threads, Work: time.Duration(s.WorkNs), Period: time.Duration(s.PeriodNs), CPUQuota: s.CPUQuota}
	info := s.Mode.Info()
	fmt.Fprintf(w, "\n%s, %.2fs: %s %s\n", headline(cfg), s.DurationS, format.Thousands(float64(s.Units())), info.Unit.Many)
	secs := s.DurationS
	if secs <= 0 {
		writeErr(w, s)
		return
	}
	if info.writeFigures != nil {
		info.writeFigures(w, s, secs)
	}
	unit := info.Unit.One
	writeCrossCPU(w, s, unit)
	writeHW(w, s, unit)
	writeErr(w, s)
}

// writePoolFigures is the pool's part of its summary.
func writePoolFigures(w io.Writer, s Summary, secs float64) {
	fmt.Fprintf(w, "  %s items/s (%s per thread)\n", format.Thousands(s.ItemsPerSec), format.Thousands(s.ItemsPerSec/float64(max(s.Threads, 1))))
	if s.SwitchesUnknown != "" {
		writeSwitchesUnknown(w, s)
	} else {
		fmt.Fprintf(w, "  %s involuntary switches/s over the pool's threads (kernel-counted; %s voluntary/s)\n",
			format.Thousands(s.InvoluntaryPerSec), format.Thousands(float64(s.SwitchesVoluntary)/secs))
	}
	if s.RunQueueWaitShare != nil {
		fmt.Fprintf(w, "  run-queue wait: %.1f%% of the threads' time runnable but waiting for a CPU (schedstat)\n", 100**s.RunQueueWaitShare)
	}
	if s.CPUQuota > 0 {
		if s.ThrottledShare != nil {
			fmt.Fprintf(w, "  CPU quota %s CPUs: throttled in %.0f%% of %s periods of 100 ms, %.2f s held back (cgroup cpu.stat)\n",
				strconv.FormatFloat(s.CPUQuota, 'g', -1, 64), 100**s.ThrottledShare, format.Thousands(float64(s.CgroupPeriods)), s.ThrottledS)
		} else {
			fmt.Fprintln(w, "  CPU quota: the cgroup's cpu.stat could not be read")
		}
	}
}

// writePollFigures is the poller's part of its summary.
func writePollFigures(w io.Writer, s Summary, secs float64) {
	fmt.Fprintf(w, "  %s wake-ups/s, %s per thread (the period promises %s, %s per thread)\n",
		format.Thousands(s.WakeupsPerSec), format.Thousands(s.WakeupsPerSecPerThread),
		format.Thousands(s.ExpectedWakeupsPerSec), format.Thousands(s.ExpectedWakeupsPerSec/float64(max(s.Threads, 1))))
	if s.SwitchesUnknown != "" {
		writeSwitchesUnknown(w, s)
		return
	}
	perWake := 0.0
	if s.Wakeups > 0 {
		perWake = float64(s.SwitchesVoluntary) / float64(s.Wakeups)
	}
	fmt.Fprintf(w, "  %s voluntary switches/s per thread (kernel-counted), %.2f per wake-up; %s involuntary/s in all\n",
		format.Thousands(s.VoluntaryPerSecPerThread), perWake, format.Thousands(float64(s.SwitchesInvoluntary)/secs))
}

// writeWalk gives the working set's figures: the walk alone, and the round
// trip net of it.
func writeWalk(w io.Writer, s Summary) {
	if s.WorkingSet == 0 || s.WalkNsPerRoundTrip == 0 {
		return
	}
	fmt.Fprintf(w, "  working set %s per side: both walks take %s ns with no switch between them (measured in this run)\n",
		FormatSize(s.WorkingSet), format.Thousands(s.WalkNsPerRoundTrip))
	fmt.Fprintf(w, "  %s ns per round trip net of the walks: the switches with their caches refilled\n", format.Thousands(s.NsPerRoundTripNet))
}

// writeCrossCPU gives the IPIs that carry wake-ups across CPUs, and the
// migrations, per unit.
func writeCrossCPU(w io.Writer, s Summary, unit string) {
	if s.WakeupIPIsPerRoundTrip == nil && s.MigrationsPerRoundTrip == nil {
		return
	}
	ipi := "unknown (/proc/interrupts unreadable)"
	if s.WakeupIPIsPerRoundTrip != nil && s.ReschedIPIs != nil && s.CallIPIs != nil {
		ipi = fmt.Sprintf("%.2f per %s (rescheduling %s + function-call %s, system-wide)", *s.WakeupIPIsPerRoundTrip, unit,
			format.Thousands(float64(*s.ReschedIPIs)), format.Thousands(float64(*s.CallIPIs)))
	}
	migr := "migrations unknown"
	if s.MigrationsPerRoundTrip != nil {
		migr = fmt.Sprintf("%.4f migrations per %s", *s.MigrationsPerRoundTrip, unit)
	}
	fmt.Fprintf(w, "  wake-up IPIs: %s; %s\n", ipi, migr)
}

// writeHW gives the hardware counters per unit, or says why there are none.
func writeHW(w io.Writer, s Summary, unit string) {
	if s.HW == nil {
		if s.HWNote != "" {
			fmt.Fprintf(w, "  hardware counters: n/a: %s\n", s.HWNote)
		}
		return
	}
	scope := ""
	if s.HW.UserOnly {
		scope = " (user space only: perf_event_paranoid hides the kernel's part)"
	}
	fmt.Fprintf(w, "  per %s: %s instructions, %s cycles, %s cache misses%s\n", unit,
		format.Thousands(s.HW.InstructionsPerRoundTrip), format.Thousands(s.HW.CyclesPerRoundTrip), fmt.Sprintf("%.1f", s.HW.CacheMissesPerRoundTrip), scope)
}

func writeErr(w io.Writer, s Summary) {
	if s.Err != "" {
		fmt.Fprintf(w, "  note: %s\n", s.Err)
	}
}
