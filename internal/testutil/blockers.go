package testutil

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Blockers is the running program of internal/stacks/testdata/blockers.c:
// its thread "mixed" blocks in reader_loop (a pipe) and consumer_wait (a
// futex condition variable), woken by "driver" from writer_loop and
// producer_put.
type Blockers struct {
	PID         int
	mu          sync.Mutex
	reads, cond int64
}

// Counts are the waits the program counted itself so far: pipe reads and
// condition waits that blocked.
func (b *Blockers) Counts() (reads, conds int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.reads, b.cond
}

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
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &Blockers{PID: cmd.Process.Pid}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r, c int64
			if _, err := fmt.Sscanf(sc.Text(), "reads=%d conds=%d", &r, &c); err == nil {
				b.mu.Lock()
				b.reads, b.cond = r, c
				b.mu.Unlock()
			}
		}
	}()
	return b
}
