package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestHidepid mounts a procfs with hidepid=2 and runs ctxtop on it as
// nobody, who sees only its own processes there: the text says so once and
// labels the remainder as hidden tasks', JSON carries "hidepid", and -p of
// another user's process says it may be hidden rather than only "no such
// process". Root, who sees everything, gets no note.
func TestHidepid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a procfs and running as another user need root")
	}
	// Not t.TempDir(): its parent is private to root, and nobody must
	// reach the binary.
	dir, err := os.MkdirTemp("", "ctxtop-hidepid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	proc := filepath.Join(dir, "proc")
	if err := os.Mkdir(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "proc", "-o", "hidepid=2", "proc", proc).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a procfs here: %v %s", err, out)
	}
	// Registered after the removal, so run before it.
	t.Cleanup(func() { exec.Command("umount", proc).Run() })
	bin := filepath.Join(dir, "ctxtop")
	for _, c := range [][]string{{"cp", testutil.Binary(t), bin}, {"chmod", "a+rx", dir, bin}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	nobody := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	run := func(attr *syscall.SysProcAttr, args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = attr
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	out, stderr, err := run(nobody, "-b", "--proc", proc, "-n", "2", "-d", "0.3")
	if err != nil {
		t.Fatalf("text as nobody: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(out, "note: the procfs is mounted hidepid=invisible") || strings.Count(out, "note: ") != 1 {
		t.Errorf("text as nobody: want one hidepid note, first:\n%s", out)
	}
	if strings.Contains(out, "new/exited tasks") || !strings.Contains(out, "hidden tasks (hidepid)") {
		t.Errorf("text as nobody: the remainder row is not labelled as hidden tasks':\n%s", out)
	}

	out, stderr, err = run(nobody, "-b", "-o", "json", "--proc", proc, "-n", "1", "-d", "0.3")
	if err != nil {
		t.Fatalf("json as nobody: %v\n%s", err, stderr)
	}
	var r struct {
		HidePID string `json:"hidepid"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.HidePID != "invisible" {
		t.Errorf("json as nobody: hidepid %q (%v), want invisible:\n%s", r.HidePID, err, out)
	}

	_, stderr, err = run(nobody, "-b", "--proc", proc, "-n", "1", "-p", "1")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Errorf("-p 1 as nobody: %v, want a non-zero exit", err)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no such process: 1") || !strings.Contains(stderr, "hidden") || !strings.Contains(stderr, "hidepid=invisible") {
		t.Errorf("-p 1 as nobody: stderr %q, want one line saying it may be hidden by hidepid", stderr)
	}

	out, stderr, err = run(nil, "-b", "--proc", proc, "-n", "1", "-d", "0.3")
	if err != nil {
		t.Fatalf("text as root: %v\n%s", err, stderr)
	}
	if strings.Contains(out, "hidepid") {
		t.Errorf("root sees every process, yet:\n%s", out)
	}
}
