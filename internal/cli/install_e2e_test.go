package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestMakeInstall: make install puts the binary, the man pages generated
// from it and the shell completions under DESTDIR+PREFIX, and the page
// renders.
func TestMakeInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	tmp := t.TempDir()
	dest := filepath.Join(tmp, "dest")
	cmd := exec.Command("make", "--no-print-directory", "install", "DESTDIR="+dest, "PREFIX=/opt/ctx", "BIN="+filepath.Join(tmp, "ctxtop"))
	cmd.Dir = testutil.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	var got []string
	filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dest, p)
			got = append(got, rel)
		}
		return nil
	})
	sort.Strings(got)
	want := []string{
		"opt/ctx/bin/ctxtop",
		"opt/ctx/share/bash-completion/completions/ctxtop",
		"opt/ctx/share/fish/vendor_completions.d/ctxtop.fish",
	}
	for _, c := range []string{"", "-bench", "-completion", "-completion-bash", "-completion-fish", "-completion-powershell", "-completion-zsh", "-demo", "-diff", "-load", "-record", "-replay", "-report", "-serve", "-version"} {
		want = append(want, "opt/ctx/share/man/man1/ctxtop"+c+".1")
	}
	want = append(want, "opt/ctx/share/zsh/site-functions/_ctxtop")
	sort.Strings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("installed files (-want +got):\n%s", diff)
	}
	for f, head := range map[string]string{
		"opt/ctx/share/bash-completion/completions/ctxtop":    "# bash completion",
		"opt/ctx/share/zsh/site-functions/_ctxtop":            "#compdef ctxtop",
		"opt/ctx/share/fish/vendor_completions.d/ctxtop.fish": "# fish completion for ctxtop",
	} {
		b, _ := os.ReadFile(filepath.Join(dest, f))
		if !strings.HasPrefix(string(b), head) {
			t.Errorf("%s starts %.40q, want %q", f, b, head)
		}
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Log("no man: the page is installed but not rendered")
		return
	}
	page := filepath.Join(dest, "opt/ctx/share/man/man1/ctxtop.1")
	man := exec.Command("man", "-l", page)
	man.Env = append(os.Environ(), "MANWIDTH=80", "MANPAGER=cat", "PAGER=cat")
	var stdout, stderr bytes.Buffer
	man.Stdout, man.Stderr = &stdout, &stderr
	if err := man.Run(); err != nil {
		t.Fatalf("man -l ctxtop.1: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"ctxtop - A top for Linux context switches", "--delay", "ctxtop-load(1)", "ctxtop-bench(1)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("man -l ctxtop.1 lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("man -l ctxtop.1 warned: %s", stderr.String())
	}
}
