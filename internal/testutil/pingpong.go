package testutil

import (
	"bufio"
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
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("ping-pong workload: %v", err)
	}
	var a, b int
	if _, err := fmt.Sscan(line, &pid, &a, &b); err != nil {
		t.Fatalf("ping-pong workload said %q: %v", line, err)
	}
	return pid, []int{a, b}
}
