package testutil

import (
	"fmt"
	"os/exec"
	"testing"
)

// StartPingPong runs the pingpong workload (two threads, pp-ping and pp-pong,
// bouncing a byte over pipes) for the rest of the test and returns its PID
// and the two threads' TIDs.
func StartPingPong(t testing.TB) (pid int, tids []int) {
	t.Helper()
	cmd := exec.Command(Tool(t, "./internal/testutil/pingpong"))
	_, out := StartWorkload(t, cmd)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("ping-pong workload: %v", err)
	}
	var a, b int
	if _, err := fmt.Sscan(line, &pid, &a, &b); err != nil {
		t.Fatalf("ping-pong workload said %q: %v", line, err)
	}
	return pid, []int{a, b}
}
