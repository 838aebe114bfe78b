package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/ctxtop/ctxtop/internal/cli/tuiadapt"
	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/selfprio"
	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/tui"
	"github.com/ctxtop/ctxtop/internal/waketrace"
)

// runTUI opens the live monitor on the terminal; demoStep > 0 runs the
// scripted tour instead, a step every demoStep, over the same source.
func runTUI(o options, demoStep time.Duration) error {
	// Attached only while a view shows its figures; closed on any return.
	col := waketrace.NewCollector()
	defer col.Close()
	// Attached while the detail view is open, or throughout with --stacks.
	sc := stacks.NewCollector(stacks.Options{Proc: o.procRoot, PIDs: o.pids})
	defer sc.Close()
	var stackSwitch tui.StacksSwitch = sc
	if o.stacks {
		sc.SetEnabled(true)
		stackSwitch = alwaysOn{sc}
	}
	// One P: the monitor's goroutines then hand off on one thread instead
	// of waking idle ones, which measured 3.8 instead of 16.8 switches/s.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Ahead of other processes when it may be (see selfprio): a load's
	// wake-ups then no longer preempt the sampling thread.
	selfprio.Raise()
	src, rec, err := openLive(o, col, sc)
	if err != nil {
		return procError(err, o.procRoot)
	}
	// Before the screen is taken: it is there again on quitting.
	warnSkipped(os.Stderr, src.Skipped())
	defer src.Close()
	err = tui.Run(tui.Options{
		Source:       src,
		Wakeups:      col,
		Stacks:       stackSwitch,
		Load:         tuiadapt.NewLoader(),
		Interval:     time.Duration(o.delay),
		HotThreshold: o.hot,
		NoColor:      o.noColor,
		Version:      version,
		Facts:        hostinfo.Read(context.Background(), o.procRoot),
		Demo:         demoStep > 0,
		DemoStep:     demoStep,
		HidePID:      hidepidMode(o.procRoot),
		// A vanished target or a failed --record write ends the
		// monitor; anything else (a transient read error) is shown and
		// the next tick retries.
		IsFatal: func(err error) bool { return errors.Is(err, sampler.ErrTargetsGone) || isRecordError(err) },
	})
	if isRecordError(err) {
		return rec.explain(err)
	}
	if cerr := rec.close(); cerr != nil && err == nil {
		return fmt.Errorf("--record: %w", cerr)
	}
	if errors.Is(err, sampler.ErrTargetsGone) {
		fmt.Fprintln(os.Stderr, "ctxtop: every process given with --pid has exited")
		return nil
	}
	return err
}

// alwaysOn keeps the stack tracer attached whatever view is open (--stacks).
type alwaysOn struct{ *stacks.Collector }

func (alwaysOn) Want(bool) {}
