package testutil

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// Blockers is the running program of internal/stacks/testdata/blockers.c:
// its thread "mixed" blocks in reader_loop (a pipe) and consumer_wait (a
// futex condition variable), woken by "driver" from writer_loop and
// producer_put.
type Blockers struct {
	PID    int
	counts *counts
}

// Counts are the waits the program counted itself so far: pipe reads and
// condition waits that blocked.
func (b *Blockers) Counts() (reads, conds int64) { return b.counts.get() }

// StartBlockers compiles blockers.c with frame pointers and starts it; it
// is killed when the test ends.
func StartBlockers(t testing.TB) *Blockers {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "blockers")
	src := filepath.Join(repoRoot(), "internal", "stacks", "testdata", "blockers.c")
	if out, err := exec.Command("cc", "-fno-omit-frame-pointer", "-O1", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("building blockers.c: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	_, out := StartWorkload(t, cmd)
	return &Blockers{PID: cmd.Process.Pid, counts: followCounts(out, "reads=%d conds=%d")}
}
