package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// exitedPID is the PID of a process that ran, exited and was reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// -p with one process already gone (-p $(pgrep -d, java) racing with an
// exit) warns in one line and watches the rest, as pidstat does; with all
// of them gone it is still an error.
func TestPidListWithOneGoneWarnsAndGoesOn(t *testing.T) {
	bin := testutil.Binary(t)
	live, _ := testutil.StartPingPong(t)
	gone := exitedPID(t)
	for _, format := range []string{"json", "text"} {
		cmd := exec.Command(bin, "-b", "-o", format, "-d", "0.2", "-n", "2", "-p", strconv.Itoa(gone)+","+strconv.Itoa(live))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("-o %s -p gone,live: %v\n%s", format, err, stderr.String())
		}
		if want := "ctxtop: no such process: " + strconv.Itoa(gone) + ";"; strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("-o %s: stderr = %q, want one line starting %q", format, stderr.String(), want)
		}
		if format == "text" {
			if strings.Count(stdout.String(), "pp-ping") != 2 {
				t.Errorf("want the live process's thread in both reports:\n%s", stdout.String())
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("want 2 reports, got:\n%s", stdout.String())
		}
		for _, l := range lines {
			var r jsonReport
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Processes) != 1 || r.Processes[0].PID != live {
				t.Errorf("want the live process alone, got %+v", r.Processes)
			}
		}
	}

	// Every one gone: the one-line error, exit 1, as before.
	other := exitedPID(t)
	cmd := exec.Command(bin, "-b", "-d", "0.2", "-n", "1", "-p", strconv.Itoa(gone)+","+strconv.Itoa(other))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("-p with every process gone: %v, want exit 1", err)
	}
	if msg := stderr.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "no such process: "+strconv.Itoa(gone)+", "+strconv.Itoa(other)) {
		t.Errorf("-p with every process gone: stderr = %q", msg)
	}
}
