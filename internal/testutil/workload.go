package testutil

import (
	"bufio"
	"io"
	"os/exec"
	"testing"
)

// StartWorkload starts cmd for the rest of the test with its stdin held open
// (the workloads exit when it closes) and returns that stdin, to send it
// commands, and its stdout, to read the line in which it says what it
// started. Cleanup closes stdin, kills it and reaps it.
func StartWorkload(t testing.TB, cmd *exec.Cmd) (io.WriteCloser, *bufio.Reader) {
	t.Helper()
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
	return stdin, bufio.NewReader(stdout)
}
