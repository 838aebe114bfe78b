package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/ctxtop/ctxtop/internal/jvm"
	"github.com/ctxtop/ctxtop/internal/stacks"
)

// jvmTimeout bounds the wait for a JVM's attach listener and for its
// answer; an idle JVM answers in tens of milliseconds.
const jvmTimeout = 5 * time.Second

// sayJVMs says on stderr, for each of pids that is a HotSpot JVM, what
// its stacks will lack: a perf map (asked for first when ask is set: the
// user's opt-in, never done otherwise), frame pointers in its JIT code.
// A perf map that came renames the stacks sc resolved without it.
func sayJVMs(stderr io.Writer, proc string, pids []int, ask bool, sc *stacks.Collector) {
	for _, pid := range pids {
		if ask {
			msg, err := liveJVMs{proc, sc}.AskPerfMap(pid)
			if err != nil {
				msg = "--jvm-perfmap: " + err.Error()
			}
			fmt.Fprintln(stderr, "ctxtop: "+msg)
		}
		notes, perfMap := jvm.Notes(proc, pid)
		if !perfMap && len(notes) > 0 {
			notes[0] += " (--jvm-perfmap asks it for one)"
		}
		for _, n := range notes {
			fmt.Fprintln(stderr, "ctxtop: "+n)
		}
	}
}

// liveJVMs are the monitor's JVMs: this host's. A perf map asked for
// renames the stacks already resolved with its JIT frames unnamed.
type liveJVMs struct {
	proc   string
	stacks *stacks.Collector
}

func (j liveJVMs) Notes(pid int) ([]string, bool) { return jvm.Notes(j.proc, pid) }
func (j liveJVMs) AskPerfMap(pid int) (string, error) {
	msg, err := jvm.AskPerfMap(j.proc, pid, jvmTimeout)
	if err == nil && j.stacks != nil {
		j.stacks.Rename(pid)
	}
	return msg, err
}
