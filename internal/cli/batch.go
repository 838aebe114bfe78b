package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/output"
	"github.com/ctxtop/ctxtop/internal/sampler"
)

// runBatch prints a report per interval, like pidstat -w -t, until
// -n reports are out, a signal arrives, or every --pid target has exited.
func runBatch(ctx context.Context, w io.Writer, o options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()

	mon, rec, err := openMonitor(o)
	if err != nil {
		return err
	}
	defer mon.Close()
	defer rec.close()

	oo := output.Options{Top: o.top, Processes: o.processes}
	if o.output == "json" {
		facts := hostinfo.Read(ctx, o.procRoot)
		oo.Host = &facts
	}
	var write func(*model.Snapshot) error
	if o.output == "json" {
		write = output.NewJSON(w, oo).Write
	} else {
		write = output.NewText(w, oo).Write
	}

	interval := time.Duration(o.delay)
	start := time.Now()
	timer := time.NewTimer(interval)
	defer timer.Stop()
	for i := 1; o.iterations == 0 || i <= o.iterations; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		// Deadlines from the start, so reports do not drift by the
		// sampling time each interval.
		next := start.Add(time.Duration(i+1) * interval)
		snap, err := mon.Next()
		if errors.Is(err, sampler.ErrTargetsGone) {
			fmt.Fprintln(os.Stderr, "ctxtop: every process given with --pid has exited")
			return nil
		}
		if err != nil {
			return rec.explain(err)
		}
		if err := write(&snap); err != nil {
			return err
		}
		timer.Reset(max(time.Until(next), 0))
	}
	return nil
}
