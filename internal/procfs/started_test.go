package procfs

import (
	"os/exec"
	"testing"
	"time"
)

// TestStarted places a child's start on the wall clock between the times
// read just before and just after starting it, to within the tick the
// kernel counts in (the start is truncated to it), and says a file written
// before that start predates the process and one written after does not.
func TestStarted(t *testing.T) {
	before := time.Now()
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	got, err := Started("/proc", cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Second / UserHZ
	if got.Before(before.Add(-tick-time.Millisecond)) || got.After(after.Add(time.Millisecond)) {
		t.Errorf("Started = %s; the child started between %s and %s (a tick's truncation allowed)",
			got.Format(time.StampMicro), before.Format(time.StampMicro), after.Format(time.StampMicro))
	}
	if !Predates(got.Add(-3*tick), got) || Predates(got, got) || Predates(got.Add(-tick), got) {
		t.Errorf("Predates: 3 ticks before the start must predate it; at the start or a tick before, not")
	}
	if _, err := Started("/proc", 1<<30); err == nil {
		t.Errorf("Started(no such PID): no error")
	}
}
