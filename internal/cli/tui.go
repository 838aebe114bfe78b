package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/tui"
	"github.com/ctxtop/ctxtop/internal/wakeup"
)

// runTUI opens the live monitor on the terminal.
func runTUI(o options) error {
	mon, rec, err := openMonitor(o)
	if err != nil {
		return procError(err, o.procRoot)
	}
	defer mon.Close()
	// Attached only while a view shows its figures; closed on any return.
	col := wakeup.NewCollector()
	defer col.Close()
	err = tui.Run(tui.Options{
		Source:       withWakeups{mon, col, o.pids},
		Wakeups:      col,
		Interval:     time.Duration(o.delay),
		HotThreshold: o.hot,
		NoColor:      o.noColor,
		Version:      version,
		ProcRoot:     o.procRoot,
		HidePID:      hidepidMode(o.procRoot),
		// A vanished target or a failed --record write ends the
		// monitor; anything else (a transient read error) is shown and
		// the next tick retries.
		IsFatal: func(err error) bool { return errors.Is(err, sampler.ErrTargetsGone) || isRecordError(err) },
	})
	if isRecordError(err) {
		// The write closed the file already.
		return rec.explain(err)
	}
	if cerr := rec.close(); cerr != nil && err == nil {
		return rec.explain(cerr)
	}
	if errors.Is(err, sampler.ErrTargetsGone) {
		fmt.Fprintln(os.Stderr, "ctxtop: every process given with --pid has exited")
		return nil
	}
	return err
}
