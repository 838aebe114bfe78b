package cli_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// Which path read the tasks shows in version and in batch JSON: as root on
// this host's procfs the BPF task walk, over a --proc tree /proc.
func TestTaskSourceShown(t *testing.T) {
	bin := testutil.Binary(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "\ntasks: bpf-task-iter\n") {
		t.Errorf("version as root = %q, want a line \"tasks: bpf-task-iter\"", out)
	}
	fixture := filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-b", "-o", "json", "-d", "0.2", "-n", "1"}, "bpf-task-iter"},
		{[]string{"-b", "-o", "json", "--proc", fixture, "-d", "0.1", "-n", "1"}, "proc"},
	} {
		out, err := exec.Command(bin, c.args...).Output()
		if err != nil {
			t.Fatalf("ctxtop %s: %v\n%s", strings.Join(c.args, " "), err, exitStderr(err))
		}
		var r jsonReport
		if err := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &r); err != nil {
			t.Fatal(err)
		}
		if got := r.System["source"]; got != c.want {
			t.Errorf("ctxtop %s: system.source = %v, want %q", strings.Join(c.args, " "), got, c.want)
		}
	}
}
