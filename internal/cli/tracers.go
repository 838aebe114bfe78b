package cli

import (
	"cmp"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/waketrace"
)

// tracers are the eBPF collectors of a live mode, opened here for every
// mode (monitor, batch, record) with one policy: a tracer asked for on
// the command line (--wakeups, --stacks, -o folded) that cannot run here
// is said once on stderr, one line saying what is missing, and the mode
// goes on without it; its reports then carry the reason as data (JSON's
// wakeups_unavailable, the views' notes). Context switch counts need no
// privilege, and a monitor that refused to start over an extra would
// leave the user with nothing.
type tracers struct {
	wakeups *waketrace.Collector
	stacks  *stacks.Collector
}

// tracerWants is what a mode asks of the tracers: each asked for on the
// command line is attached from the start; lazy makes the others too,
// off, for views to switch on (the monitor).
type tracerWants struct {
	wakeups, stacks, lazy bool
	// stackBytes is --stack-bytes: 0 copies no user stack.
	stackBytes int
	proc       string
	pids       []int
}

// openTracers makes the collectors w asks for and attaches those asked
// for on the command line, saying on stderr why any of those cannot run.
// A nil field is a tracer not asked for.
func openTracers(stderr io.Writer, w tracerWants) *tracers {
	var t tracers
	if w.wakeups || w.lazy {
		t.wakeups = waketrace.NewCollector()
		if w.wakeups {
			t.wakeups.SetEnabled(true)
			sayUnavailable(stderr, t.wakeups.Err())
		}
	}
	if w.stacks || w.lazy {
		t.stacks = stacks.NewCollector(stacks.Options{Proc: w.proc, PIDs: w.pids, StackBytes: cmp.Or(w.stackBytes, -1)})
		if w.stacks {
			t.stacks.SetEnabled(true)
			sayUnavailable(stderr, t.stacks.Err())
		}
	}
	return &t
}

func sayUnavailable(stderr io.Writer, err error) {
	if err != nil {
		fmt.Fprintln(stderr, "ctxtop: "+err.Error())
	}
}

// Close detaches every tracer.
func (t *tracers) Close() {
	if t.wakeups != nil {
		t.wakeups.Close()
	}
	if t.stacks != nil {
		t.stacks.Close()
	}
}

// stackBytesFlag is --stack-bytes, of the modes that take stacks.
func stackBytesFlag(f *pflag.FlagSet, v *int) {
	f.IntVar(v, "stack-bytes", stacks.DefaultStackBytes, "bytes of user stack copied at each sampled blocking switch and waking, to unwind code built without frame pointers (libc, -O2 C and C++) from its .eh_frame; 0 walks frame pointers only")
}

func checkStackBytes(n int) error {
	if n < 0 || n >= stacks.MaxStackBytes {
		return fmt.Errorf("--stack-bytes must be 0 to %d, got %d", stacks.MaxStackBytes-1, n)
	}
	return nil
}
