package cli_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// foldedRoots are the root frames of -o folded output, by line count.
func foldedRoots(t *testing.T, out []byte) map[string]int {
	t.Helper()
	roots := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		sp := strings.LastIndexByte(l, ' ')
		if sp < 0 {
			t.Fatalf("folded line without a count: %q", l)
		}
		if n, err := strconv.ParseUint(l[sp+1:], 10, 64); err != nil || n == 0 {
			t.Errorf("bad count in %q", l)
		}
		root, _, _ := strings.Cut(l[:sp], ";")
		roots[root]++
	}
	return roots
}

// ctxtop -o folded -n 1, without -p, was always empty: the stack tracer's
// targets were chosen from the first report, after its interval. The one
// report now holds the stacks of its interval, the ping-pong's among them.
func TestFoldedFirstReportHasStacks(t *testing.T) {
	needStacks(t)
	bin := testutil.Binary(t)
	testutil.StartPingPong(t)
	out, err := exec.Command(bin, "-o", "folded", "-n", "1", "-d", "0.5").Output()
	if err != nil {
		t.Fatalf("ctxtop -o folded -n 1: %v\n%s", err, exitStderr(err))
	}
	roots := foldedRoots(t, out)
	if roots["pp-ping"]+roots["pp-pong"] == 0 {
		t.Errorf("no stack of the ping-pong's threads in the one report; roots %v:\n%.1500s", roots, out)
	}
}

// --processes with -o folded roots each stack at the thread's process, so
// a flame graph has one flame per process, its threads' stacks summed.
func TestFoldedProcessesRootsAtTheProcess(t *testing.T) {
	needStacks(t)
	bin := testutil.Binary(t)
	pid, _ := testutil.StartPingPong(t)
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSpace(string(comm))
	out, err := exec.Command(bin, "-o", "folded", "--processes", "-n", "1", "-d", "0.5", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("ctxtop -o folded --processes: %v\n%s", err, exitStderr(err))
	}
	roots := foldedRoots(t, out)
	if roots[name] == 0 || len(roots) != 1 {
		t.Errorf("roots %v, want every stack under the process %q:\n%.1500s", roots, name, out)
	}
	// Alike lines are summed, not repeated.
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		stack := l[:strings.LastIndexByte(l, ' ')]
		if seen[stack] {
			t.Errorf("stack printed twice in one report's lines: %q", stack)
		}
		seen[stack] = true
	}
}

// -o folded with no stack to fold said nothing: an empty flame graph looked
// like a host where nothing blocked. It now says why on stderr, one line,
// and stdout stays empty for the flame graph tools.
func TestFoldedEmptySaysWhy(t *testing.T) {
	needStacks(t)
	bin := testutil.Binary(t)
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	for _, c := range []struct {
		args []string
		want string
	}{
		// No thread switches a trillion times a second: nothing to trace.
		{[]string{"--hot", "1e12"}, "ctxtop: no stacks to fold: no thread blocked at 1000000000000 switches/s or more (--hot) to be traced; name a process with -p to trace all its threads\n"},
		// A sleeping process is traced, and never switches out.
		{[]string{"-p", strconv.Itoa(sleeper.Process.Pid)}, "ctxtop: no stacks to fold: the traced threads did not block (switch out) in the reports' intervals\n"},
	} {
		cmd := exec.Command(bin, append([]string{"-o", "folded", "-n", "1", "-d", "0.5"}, c.args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("ctxtop -o folded %v: %v\n%s", c.args, err, stderr.String())
		}
		if len(out) != 0 {
			t.Errorf("%v: stdout %q, want nothing", c.args, out)
		}
		if stderr.String() != c.want {
			t.Errorf("%v: stderr %q, want %q", c.args, stderr.String(), c.want)
		}
	}
}
