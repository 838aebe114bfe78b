package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestRecordNeverWritesThroughALink plants a symbolic link where each
// command that writes a recording is told to write: every one refuses it
// in one line and leaves the link's target alone; with --force the link
// itself is replaced by the recording.
func TestRecordNeverWritesThroughALink(t *testing.T) {
	bin := testutil.Binary(t)
	pid := strconv.Itoa(busySelf(t))
	for _, tc := range []struct {
		name string
		args func(file string) []string
	}{
		{"record", func(f string) []string {
			return []string{"record", "-o", f, "-p", pid, "-d", "0.1", "--duration", "1s"}
		}},
		{"record --rotate", func(f string) []string {
			return []string{"record", "-o", f, "-p", pid, "-d", "0.1", "--duration", "1s", "--max-size", "1MB", "--rotate", "3"}
		}},
		{"-b --record", func(f string) []string { return []string{"-b", "-p", pid, "-d", "0.1", "-n", "3", "--record", f} }},
	} {
		dir := t.TempDir()
		target := filepath.Join(dir, "target")
		if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "planted.ctxrec")
		if err := os.Symlink(target, file); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, tc.args(file)...).CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil || len(lines) != 1 || !strings.Contains(lines[0], "already exists; --force replaces it") {
			t.Errorf("%s onto a link: %v, want exit 1 and one line saying it exists:\n%s", tc.name, err, out)
		}
		if b, _ := os.ReadFile(target); string(b) != "precious" {
			t.Errorf("%s wrote through the link: the target holds %.20q", tc.name, b)
		}
		out, err = exec.Command(bin, append(tc.args(file), "--force")...).CombinedOutput()
		if err != nil {
			t.Errorf("%s --force: %v\n%s", tc.name, err, out)
		}
		if b, _ := os.ReadFile(target); string(b) != "precious" {
			t.Errorf("%s --force wrote through the link: the target holds %.20q", tc.name, b)
		}
		if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s --force: the link was not replaced by a file: %v", tc.name, err)
		}
		if r, err := record.Open(file); err != nil || r.Samples() < 2 {
			t.Errorf("%s --force: the recording does not open: %v", tc.name, err)
		}
	}
}

// TestRecordRefusesAnExistingFile: a recording, or a part of a ring, is
// not truncated by the next run unless --force says so.
func TestRecordRefusesAnExistingFile(t *testing.T) {
	bin := testutil.Binary(t)
	pid := strconv.Itoa(busySelf(t))
	dir := t.TempDir()
	file := filepath.Join(dir, "kept.ctxrec")
	for _, name := range []string{file, file + ".2"} {
		if err := os.WriteFile(name, []byte("an earlier recording"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"record", "-o", file, "-p", pid, "-d", "0.1", "--duration", "1s", "--max-size", "1MB", "--rotate", "3"}
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), filepath.Base(name)+" already exists; --force replaces it") {
			t.Errorf("%s there: %v, want a refusal naming it:\n%s", filepath.Base(name), err, out)
		}
		if b, _ := os.ReadFile(name); string(b) != "an earlier recording" {
			t.Errorf("%s was overwritten: %.20q", filepath.Base(name), b)
		}
		os.Remove(file)
	}
}

// TestTinyMaxSizeIsRefused: a --max-size below what two samples take
// fails in one line naming the size the first sample took, leaves no
// file, and never reports samples recorded.
func TestTinyMaxSizeIsRefused(t *testing.T) {
	bin := testutil.Binary(t)
	pid := strconv.Itoa(busySelf(t))
	dir := t.TempDir()
	for _, extra := range [][]string{nil, {"--rotate", "3"}} {
		file := filepath.Join(dir, "tiny.ctxrec")
		args := append([]string{"record", "-o", file, "-p", pid, "-d", "0.1", "--duration", "2s", "--max-size", "200"}, extra...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err == nil || len(lines) != 1 || !strings.Contains(lines[0], "--max-size 200 B is too small: the header and first sample alone take") {
			t.Errorf("%v: %v, want exit 1 and one line naming the size needed:\n%s", extra, err, out)
		}
		if left, _ := filepath.Glob(file + "*"); len(left) > 0 {
			t.Errorf("%v: files left: %q", extra, left)
		}
	}
}
