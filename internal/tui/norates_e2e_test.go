package tui_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// The monitor on a --proc tree whose /proc/stat ctxt steps back: the header
// says there is no rate and why, and never shows the unknown interval as a
// quiet host's 0, at 80x24 and at 40x10.
func TestHeaderSaysNoRatesInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	for _, sz := range []struct{ w, h int }{{80, 24}, {40, 10}} {
		root := filepath.Join(t.TempDir(), "proc")
		if err := os.CopyFS(root, os.DirFS(filepath.Join(testutil.RepoRoot(), "testdata", "proc"))); err != nil {
			t.Fatal(err)
		}
		x := startTmux(t, fmt.Sprintf("norates-%dx%d", sz.w, sz.h), sz.w, sz.h, bin+" -d 0.3 --proc "+root)
		x.waitFor("the first rates", func(p string) bool { return csFigure(p) == "0" })
		// ctxtop keeps /proc/stat open and reads it with pread: rewrite
		// it in place, same length.
		stepBack(t, filepath.Join(root, "stat"), "ctxt 2727877", "ctxt 0000010")
		p := x.waitFor("the header to say there is no rate", contains("no rates: "))
		if got := csFigure(p); got != "-" {
			t.Errorf("%dx%d: cs/s shows %q for an interval without rates, want -:\n%s", sz.w, sz.h, got, p)
		}
		checkFits(t, p, sz.w, sz.h)
		// Two intervals later the rates are back, from the new level.
		x.waitFor("the rates to resume", func(p string) bool {
			return csFigure(p) == "0" && !strings.Contains(p, "no rates")
		})
	}
}

// csFigure is the word after cs/s in the header, "" before it shows.
func csFigure(pane string) string {
	f := strings.Fields(pane)
	for i := range f[:max(len(f)-1, 0)] {
		if f[i] == "cs/s" {
			return f[i+1]
		}
	}
	return ""
}

func stepBack(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(old))
	if i < 0 || len(old) != len(new) {
		t.Fatalf("%s: cannot replace %q with %q in place", path, old, new)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(new), int64(i)); err != nil {
		t.Fatal(err)
	}
}
