package testutil

import (
	"os/exec"
	"testing"
)

// GoMutex is the running program of internal/stacks/testdata/gomutex:
// worker goroutines, each locked to an OS thread named "worker",
// contending for sync.Mutexes in main.(*ledger).transfer and
// main.(*ledger).audit.
type GoMutex struct {
	PID    int
	counts *counts
}

// Waits are the Locks that waited, by function, as the program counted
// them so far.
func (g *GoMutex) Waits() (transfer, audit int64) { return g.counts.get() }

// StartGoMutex builds the program and starts it with 4 workers, each
// locked to its thread; it is killed when the test ends.
func StartGoMutex(t testing.TB) *GoMutex {
	t.Helper()
	cmd := exec.Command(Tool(t, "./internal/stacks/testdata/gomutex"), "-workers", "4", "-lock")
	_, out := StartWorkload(t, cmd)
	return &GoMutex{PID: cmd.Process.Pid, counts: followCounts(out, "transfer=%d audit=%d")}
}
