package cli_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// stall stops the process for d once it has printed `after` lines of
// stdout, as a host on fire or a Ctrl-Z does, and returns every line.
func stall(t *testing.T, cmd *exec.Cmd, after int, d time.Duration) []string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == after {
			if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
			if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, exitStderr(err))
	}
	return lines
}

// checkIntervals fails for any report over less than half the interval:
// its rates would be a few milliseconds' worth scaled up a hundredfold.
func checkIntervals(t *testing.T, lines []string, interval float64, want int) {
	t.Helper()
	if len(lines) != want {
		t.Errorf("got %d reports, want %d", len(lines), want)
	}
	for i, line := range lines {
		var r jsonReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("report %d is not JSON: %v\n%.200s", i, err, line)
		}
		if r.Interval < interval/2 {
			t.Errorf("report %d is over %.4f s, less than half the %.1f s interval", i, r.Interval, interval)
		}
	}
}

// A batch run stopped for longer than several intervals must not fire the
// missed reports back to back when it resumes: it skips them, as top does.
func TestBatchSkipsMissedTicksAfterAStall(t *testing.T) {
	bin := testutil.Binary(t)
	cmd := exec.Command(bin, "-b", "-o", "json", "-d", "0.5", "-n", "6")
	checkIntervals(t, stall(t, cmd, 2, 2500*time.Millisecond), 0.5, 6)
}

// The same for a recording: its replay reports are the intervals the
// recorder sampled.
func TestRecordSkipsMissedTicksAfterAStall(t *testing.T) {
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "stalled.ctxrec")
	rec := exec.Command(bin, "record", "-o", file, "-d", "0.5", "--flush", "0.5", "--duration", "6")
	if err := rec.Start(); err != nil {
		t.Fatal(err)
	}
	// Stop it once it has recorded a few intervals, however long a busy
	// host took to start it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if r, err := record.Open(file); err == nil {
			n := r.Samples()
			r.Close()
			if n >= 3 {
				break
			}
		}
		if time.Now().After(deadline) {
			rec.Process.Kill()
			t.Fatal("the recorder wrote no 3 samples in 20 s")
		}
	}
	if err := rec.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if err := rec.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := rec.Wait(); err != nil {
		t.Fatalf("record: %v", err)
	}
	out, err := exec.Command(bin, "replay", "-b", "-o", "json", file).Output()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, exitStderr(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		t.Fatalf("only %d reports replayed:\n%s", len(lines), out)
	}
	checkIntervals(t, lines, 0.5, len(lines))
}
