// Package tuitest holds the golden-file helpers the TUI component tests share.
package tuitest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Size is one terminal size the goldens are taken at.
type Size struct {
	Name          string
	Width, Height int
}

// Sizes are the sizes every component is checked at: the SSH default, a
// roomy terminal, and the smallest supported.
var Sizes = []Size{{"80x24", 80, 24}, {"120x40", 120, 40}, {"40x10", 40, 10}}

// Render passes s through a colour profile writer, so a golden holds the
// same bytes whatever terminal the test runs in.
func Render(t testing.TB, s string, p colorprofile.Profile) string {
	t.Helper()
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := w.WriteString(s); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Golden compares got with testdata/<TestName>/<name>.golden, rewriting it
// under -update.
func Golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(t.Name()), name+".golden")
	// Subtests' names are part of t.Name(); keep only the top-level test as
	// the directory so each case is one file.
	if i := strings.IndexByte(t.Name(), '/'); i >= 0 {
		path = filepath.Join("testdata", t.Name()[:i], name+".golden")
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got)\n%s", path, diff)
	}
}

// CheckFits reports any line wider than w and more than h lines.
func CheckFits(t testing.TB, s string, w, h int) {
	t.Helper()
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		t.Errorf("%d lines, want at most %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide, want at most %d: %q", i, n, w, ansi.Strip(l))
		}
	}
}
