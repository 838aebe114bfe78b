package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// ctxtop --version is the first thing many try; it says what ctxtop version
// says on its first line.
func TestVersionFlag(t *testing.T) {
	bin := testutil.Binary(t)
	flag, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, exitStderr(err))
	}
	cmd, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	first, _, _ := strings.Cut(string(cmd), "\n")
	if diff := cmp.Diff(first+"\n", string(flag)); diff != "" {
		t.Errorf("--version differs from version's first line (-want +got):\n%s", diff)
	}
}

// -n 0 is what the manual shows as the default: reports until interrupted.
func TestZeroIterationsRunsUntilInterrupted(t *testing.T) {
	bin := testutil.Binary(t)
	cmd := exec.Command(bin, "-b", "-o", "json", "-d", "0.2", "-n", "0", "-p", "1")
	lines := make(chan string, 16)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := out.Read(buf)
			for range strings.Count(string(buf[:n]), "\n") {
				lines <- "report"
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}()
	for range 3 {
		select {
		case <-lines:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatal("no 3 reports in 20 s with -n 0")
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("-n 0 interrupted: %v, want exit 0", err)
	}
}

// The shells complete flag values from the words the flags accept.
func TestFlagValuesComplete(t *testing.T) {
	bin := testutil.Binary(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"load", "--mode", ""}, []string{"syscall", "goroutine", "futex", "pipe", "process", "pool", "poll"}},
		{[]string{"load", "--mode", "p"}, []string{"pipe", "process", "pool", "poll"}},
		{[]string{"-o", ""}, []string{"text", "json", "folded"}},
		{[]string{"replay", "x.ctxrec", "-o", "j"}, []string{"json"}},
		{[]string{"bench", "-o", "m"}, []string{"markdown"}},
		{[]string{"serve", "--group-by", ""}, []string{"name", "pid"}},
	} {
		out, err := exec.Command(bin, append([]string{"__complete"}, c.args...)...).Output()
		if err != nil {
			t.Errorf("__complete %q: %v", c.args, err)
			continue
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !strings.HasPrefix(l, ":") {
				got = append(got, l)
			}
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("completing %q (-want +got):\n%s", c.args, diff)
		}
	}
}

// The manual has what the help screen has: every key and the columns.
func TestManualHasKeysAndColumns(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command(testutil.Tool(t, "./internal/cli/genman"), dir).CombinedOutput(); err != nil {
		t.Fatalf("gen-man: %v\n%s", err, out)
	}
	page, err := os.ReadFile(filepath.Join(dir, "ctxtop.1"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	keys, cols, see := strings.Index(s, ".SH KEYS"), strings.Index(s, ".SH COLUMNS"), strings.Index(s, ".SH SEE ALSO")
	if keys < 0 || cols < keys || see < cols {
		t.Fatalf("sections KEYS at %d, COLUMNS at %d, SEE ALSO at %d: want them in that order", keys, cols, see)
	}
	for _, want := range []string{`\fBW\fP` + "\nwho wakes whom", `\fBEnter\fP`, "WAIT% runnable", "NVCSW/s involuntary"} {
		if !strings.Contains(s, want) {
			t.Errorf("ctxtop.1 lacks %q", want)
		}
	}
}
