package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/output"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/wakeup"
)

// runBatch prints a report per interval, like pidstat -w -t, until
// -n reports are out, a signal arrives, or every --pid target has exited.
func runBatch(ctx context.Context, w io.Writer, o options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := stopOnSignal(ctx, stuckGrace)
	defer stop()

	mon, rec, err := openMonitor(o)
	if err != nil {
		return procError(err, o.procRoot)
	}
	o.hidepid = hidepidMode(o.procRoot)
	defer mon.Close()
	var src interface {
		Next() (model.Snapshot, error)
	} = mon
	if o.wakeups {
		col := wakeup.NewCollector()
		defer col.Close()
		col.SetEnabled(true)
		if err := col.Err(); err != nil {
			// Everything else still works: say what is missing once.
			fmt.Fprintln(os.Stderr, "ctxtop: "+err.Error())
			col.SetEnabled(false)
		} else {
			src = withWakeups{mon, col, o.pids}
		}
	}
	defer rec.close()

	write := reportWriter(w, o, func() hostinfo.Facts { return hostinfo.Read(ctx, o.procRoot) })

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
		snap, err := src.Next()
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

// reportWriter prints batch reports, live or replayed, as o asks: text,
// or JSON lines naming the host facts returns, read only for JSON.
func reportWriter(w io.Writer, o options, facts func() hostinfo.Facts) func(*model.Snapshot) error {
	oo := output.Options{Top: o.top, Processes: o.processes, Cgroups: o.cgroups, HidePID: o.hidepid}
	if o.output != "json" {
		return output.NewText(w, oo).Write
	}
	f := facts()
	oo.Host = &f
	return output.NewJSON(w, oo).Write
}

// withWakeups adds the wake-up graph of the same interval to each snapshot;
// with --pid, only the pairs one of those processes is on either side of.
type withWakeups struct {
	mon  *sampler.Monitor
	col  *wakeup.Collector
	pids []int
}

func (w withWakeups) Next() (model.Snapshot, error) {
	s, err := w.mon.Next()
	if err == nil {
		s.Wakeups = w.col.Snapshot()
		if s.Wakeups != nil && len(w.pids) > 0 {
			s.Wakeups.Pairs = slices.DeleteFunc(s.Wakeups.Pairs, func(p model.WakeupPair) bool {
				return !slices.Contains(w.pids, p.WakerPID) && !slices.Contains(w.pids, p.WakeePID)
			})
		}
	}
	return s, err
}
