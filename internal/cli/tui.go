package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/tui"
)

// runTUI opens the live monitor on the terminal.
func runTUI(o options) error {
	mon, err := sampler.NewMonitor(sampler.Config{Root: o.procRoot, PIDs: o.pids, HotThreshold: o.hot})
	if err != nil {
		return err
	}
	defer mon.Close()
	err = tui.Run(tui.Options{
		Source:       mon,
		Interval:     time.Duration(o.delay),
		HotThreshold: o.hot,
		NoColor:      o.noColor,
		Version:      version,
		ProcRoot:     o.procRoot,
		// A vanished target ends the monitor; anything else (a
		// transient read error) is shown and the next tick retries.
		IsFatal: func(err error) bool { return errors.Is(err, sampler.ErrTargetsGone) },
	})
	if errors.Is(err, sampler.ErrTargetsGone) {
		fmt.Fprintln(os.Stderr, "ctxtop: every process given with --pid has exited")
		return nil
	}
	return err
}
