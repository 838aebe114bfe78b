package load

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO in place of sched or schedstat must not hang the reader: it is
// skipped like a kernel without the file.
func TestReadCountersSkipsAFIFO(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "1", "task", "2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("../../testdata/proc/100/task/100/status")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "status"), status, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"sched", "schedstat"} {
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	var c Counters
	go func() {
		var err error
		c, err = ReadCounters(root, 1, 2)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		if c.HasMigrations || c.HasSchedstat || c.Voluntary == 0 {
			t.Errorf("ReadCounters = %+v, want the status counters, no migrations and no schedstat", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadCounters blocked on a FIFO")
	}
}
