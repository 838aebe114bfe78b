package testutil

import (
	"fmt"
	"io"
	"os/exec"
	"testing"
)

// Brief is the running brief workload: two threads, brief-a and brief-b,
// that wake every millisecond until told to end.
type Brief struct {
	PID, A, B int
	stdin     io.WriteCloser
	cmd       *exec.Cmd
}

// StartBrief runs the brief workload for the rest of the test.
func StartBrief(t testing.TB) *Brief {
	t.Helper()
	cmd := exec.Command(Tool(t, "./internal/testutil/brief"))
	in, out := StartWorkload(t, cmd)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("brief workload: %v", err)
	}
	b := &Brief{stdin: in, cmd: cmd}
	if _, err := fmt.Sscan(line, &b.PID, &b.A, &b.B); err != nil {
		t.Fatalf("brief workload said %q: %v", line, err)
	}
	return b
}

// EndA ends thread brief-a; the process lives on.
func (b *Brief) EndA() error {
	_, err := io.WriteString(b.stdin, "end\n")
	return err
}

// End ends the process and reaps it, as a parent would: until then its
// main thread stays in /proc, a zombie.
func (b *Brief) End() error {
	if err := b.stdin.Close(); err != nil {
		return err
	}
	return b.cmd.Wait()
}
