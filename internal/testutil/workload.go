package testutil

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"sync"
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

// counts is the last pair of counts a test program printed of itself (how
// often it waited where, say), a line at a time.
type counts struct {
	mu   sync.Mutex
	a, b int64
}

func (c *counts) get() (a, b int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.a, c.b
}

// followCounts reads r's lines for as long as the program writes them and
// keeps the last pair that parses with format, a Sscanf format of two %d.
func followCounts(r io.Reader, format string) *counts {
	c := &counts{}
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var a, b int64
			if _, err := fmt.Sscanf(sc.Text(), format, &a, &b); err == nil {
				c.mu.Lock()
				c.a, c.b = a, b
				c.mu.Unlock()
			}
		}
	}()
	return c
}
