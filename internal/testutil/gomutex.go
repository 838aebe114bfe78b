package testutil

import (
	"bufio"
	"fmt"
	"os/exec"
	"sync"
	"testing"
)

// GoMutex is the running program of internal/stacks/testdata/gomutex:
// worker goroutines, each locked to an OS thread named "worker",
// contending for sync.Mutexes in main.(*ledger).transfer and
// main.(*ledger).audit.
type GoMutex struct {
	PID             int
	mu              sync.Mutex
	transfer, audit int64
}

// Waits are the Locks that waited, by function, as the program counted
// them so far.
func (g *GoMutex) Waits() (transfer, audit int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.transfer, g.audit
}

// StartGoMutex builds the program and starts it with 4 workers, each
// locked to its thread; it is killed when the test ends.
func StartGoMutex(t testing.TB) *GoMutex {
	t.Helper()
	cmd := exec.Command(Tool(t, "./internal/stacks/testdata/gomutex"), "-workers", "4", "-lock")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	g := &GoMutex{PID: cmd.Process.Pid}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var tr, au int64
			if _, err := fmt.Sscanf(sc.Text(), "transfer=%d audit=%d", &tr, &au); err == nil {
				g.mu.Lock()
				g.transfer, g.audit = tr, au
				g.mu.Unlock()
			}
		}
	}()
	return g
}
