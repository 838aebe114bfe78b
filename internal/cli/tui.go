package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/cli/tuiadapt"
	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/selfprio"
	"github.com/ctxtop/ctxtop/internal/settings"
	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/tui"
)

// runTUI opens the live monitor on the terminal; demoStep > 0 runs the
// scripted tour instead, a step every demoStep, over the same source.
func runTUI(o options, demoStep time.Duration) error {
	// Wake-ups attached while a view shows their figures (--wakeups is
	// batch's); stacks while the detail view is open, or throughout with
	// --stacks. Closed on any return. What cannot run is said before the
	// screen is taken: it is there again on quitting.
	tr := openTracers(os.Stderr, tracerWants{stacks: o.stacks, stackBytes: o.stackBytes, lazy: true, proc: o.procRoot, pids: o.pids})
	defer tr.Close()
	col, sc := tr.wakeups, tr.stacks
	var stackSwitch tui.StacksSwitch = sc
	if o.stacks {
		stackSwitch = alwaysOn{sc}
	}
	// One P: the monitor's goroutines then hand off on one thread instead
	// of waking idle ones, which measured 3.8 instead of 16.8 switches/s.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// Ahead of other processes when it may be (see selfprio): a load's
	// wake-ups then no longer preempt the sampling thread.
	selfprio.Raise()
	// The demo's tour sets its own views: it neither reads nor keeps them.
	cfg := loadSettings(o, demoStep == 0)
	o.delay = delayValue(cfg.interval)
	src, rec, err := openLive(o, col, sc)
	if err != nil {
		return procError(err, o.procRoot)
	}
	// Before the screen is taken: it is there again on quitting.
	warnSkipped(os.Stderr, src.Skipped())
	defer src.Close()
	var actions tui.Actions = tui.Kernel{}
	var jvms tui.JVM = liveJVMs{o.procRoot, sc}
	noActions := ""
	if filepath.Clean(o.procRoot) != "/proc" {
		// The IDs on screen are that tree's: here they may name anything.
		actions, noActions = nil, "not possible with --proc "+o.procRoot+": its threads need not be this host's"
		jvms = nil
	}
	err = tui.Run(tui.Options{
		Actions:      actions,
		NoActionsWhy: noActions,
		JVM:          jvms,
		Settings:     cfg.start,
		SaveSettings: cfg.save,
		SettingsNote: cfg.note,
		Source:       src,
		Wakeups:      col,
		Stacks:       stackSwitch,
		Load:         tuiadapt.NewLoader(),
		Interval:     cfg.interval,
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

// liveSettings are the monitor's saved view, with the command line over it.
type liveSettings struct {
	start    settings.Settings
	interval time.Duration
	// save keeps the view on screen at the end; nil with --no-config.
	save func(settings.Settings)
	// note says what the saved file changed from the defaults, "" for
	// nothing.
	note string
}

// loadSettings reads the saved view unless --no-config (or use is false);
// a file that cannot be read costs one warning line and the defaults, and
// is rewritten at the end. -d, --processes and --cgroups override it; their
// values are saved only when changed on screen, so a one-off -d 5 does not
// become every later run's interval.
func loadSettings(o options, use bool) liveSettings {
	ls := liveSettings{interval: time.Duration(o.delay)}
	switch {
	case o.processes:
		ls.start.View = "processes"
	case o.cgroups:
		ls.start.View = "cgroups"
	}
	dir := settings.Dir()
	if !use || o.noConfig || dir == "" {
		return ls
	}
	saved, err := settings.Load(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ctxtop: ignoring the saved view (%v); starting with the defaults\n", err)
	}
	start := saved
	if o.viewGiven {
		start.View = ls.start.View
	}
	if d := saved.IntervalDuration(); d > 0 && !o.delayGiven {
		ls.interval = d
	}
	ls.start = start
	ls.note = restoredNote(saved, start, ls.interval, o.viewGiven, o.delayGiven)
	ls.save = func(end settings.Settings) {
		if o.viewGiven && end.View == start.View {
			end.View = saved.View
		}
		endD := end.IntervalDuration()
		if endD == 0 {
			endD = time.Second // the monitor leaves its default out
		}
		if o.delayGiven && endD == time.Duration(o.delay) {
			end.Interval = saved.Interval
		}
		if end.Equal(saved) && err == nil {
			return // nothing changed: leave the file as it is
		}
		if serr := settings.Save(dir, end); serr != nil {
			fmt.Fprintf(os.Stderr, "ctxtop: the view was not saved: %v\n", serr)
		}
	}
	return ls
}

// restoredNote is the footer's line at start when the saved file changed
// what the monitor shows, "" when it changed nothing: the header keeps
// the filter and view, but a user who forgot them must be told they come
// from an earlier run, and how to start without them.
func restoredNote(saved, start settings.Settings, interval time.Duration, viewGiven, delayGiven bool) string {
	var what []string
	if start.View != "" && start.View != "threads" && !viewGiven {
		what = append(what, start.View)
	}
	if start.Tree {
		what = append(what, "tree")
	}
	if start.Grouped {
		what = append(what, "grouped")
	}
	if start.Filter != "" {
		// As typed, as the table says it: Go's quoting would double a
		// backslash.
		what = append(what, `filter "`+sanitize.Name(start.Filter)+`"`)
	}
	if start.Sort != "" && (start.Sort != "TOTAL/s" || start.Reverse) {
		what = append(what, "sort "+sanitize.Name(start.Sort))
	}
	if saved.IntervalDuration() > 0 && !delayGiven {
		what = append(what, "every "+interval.String())
	}
	if len(what) == 0 {
		return ""
	}
	return "last run's view: " + strings.Join(what, ", ") + " (--no-config ignores it)"
}
