package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/output"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/sampler"
)

// runBatch prints a report per interval, like pidstat -w -t, until
// -n reports are out, a signal arrives, or every --pid target has exited.
func runBatch(ctx context.Context, w io.Writer, o options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var passes passTimes
	ctx, stop := stopOnSignal(ctx, passes.grace)
	defer stop()

	tr := openTracers(os.Stderr, tracerWants{wakeups: o.wakeups, stacks: o.stacks, stackBytes: o.stackBytes, proc: o.procRoot, pids: o.pids})
	defer tr.Close()
	var wakeups pipeline.WakeupReader
	if tr.wakeups != nil {
		wakeups = tr.wakeups
	}
	var stackReader pipeline.StacksReader
	if tr.stacks != nil {
		stackReader = tr.stacks
	}
	src, rec, err := openLive(o, wakeups, stackReader)
	if err != nil {
		return procError(err, o.procRoot)
	}
	// Once the -p processes are known to exist, and before the first
	// stacks are resolved.
	if o.stacks {
		sayJVMs(os.Stderr, o.procRoot, o.pids, o.jvmPerfMap, tr.stacks)
	}
	warnSkipped(os.Stderr, src.Skipped())
	o.hidepid = hidepidMode(o.procRoot)
	// Batch mode exits when the reports are written.
	defer src.CloseForExit()
	defer rec.close()

	write, end := reportWriter(w, o, func() hostinfo.Facts { return hostinfo.Read(ctx, o.procRoot) })
	defer func() {
		if why := end(); why != "" {
			fmt.Fprintln(os.Stderr, "ctxtop: "+why)
		}
	}()
	err = pipeline.Run(ctx, time.Duration(o.delay), o.iterations, func() error {
		var snap model.Snapshot
		if err := passes.time(func() (err error) { snap, err = src.Next(); return err }); err != nil {
			return err
		}
		return write(&snap)
	})
	if errors.Is(err, sampler.ErrTargetsGone) {
		fmt.Fprintln(os.Stderr, "ctxtop: every process given with --pid has exited")
		return nil
	}
	return rec.explain(err)
}

// reportWriter prints batch reports, live or replayed, in the format o
// names, reading the host facts only for a format that prints them; end
// is the format's last word once the reports are out ("" for none).
func reportWriter(w io.Writer, o options, facts func() hostinfo.Facts) (write func(*model.Snapshot) error, end func() string) {
	f := o.output.format()
	oo := output.Options{Top: o.top, Processes: o.processes, Cgroups: o.cgroups, HidePID: o.hidepid, PIDs: o.pids, Hot: o.hot}
	if f.Host {
		h := facts()
		oo.Host = &h
	}
	ow := f.New(w, oo)
	end = func() string { return "" }
	if e, ok := ow.(output.Ender); ok {
		end = e.End
	}
	return ow.Write, end
}
