package bench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", t.Name(), name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// TestWriteText: the matrix grouped by experiment, each table with the
// median run and the range of the runs, then its conclusions; all but the
// tables' rows within 80 columns, and a column nothing was measured for
// (here IPIs and migrations) left out.
func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	WriteText(&b, matrix())
	golden(t, "matrix", b.Bytes())
	table := false
	for i, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "mode ") {
			table = true
		}
		if l == "" {
			table = false
		}
		if n := utf8.RuneCountInString(l); n > textWidth && !table {
			t.Errorf("line %d is %d columns: %q", i, n, l)
		}
		if strings.HasPrefix(l, "mode ") && strings.Contains(l, "IPIs/trip") {
			t.Errorf("line %d has a column with nothing measured: %q", i, l)
		}
	}
}

func TestWriteMarkdown(t *testing.T) {
	var b bytes.Buffer
	WriteMarkdown(&b, matrix())
	golden(t, "matrix", b.Bytes())
}

func TestWrap(t *testing.T) {
	got := wrap("one two three four", 9, "- ", "  ")
	if diff := cmp.Diff("- one two\n  three\n  four\n", got); diff != "" {
		t.Errorf("wrap (-want +got):\n%s", diff)
	}
	if got := wrap("averyveryverylongword x", 9, "- ", "  "); got != "- averyveryverylongword\n  x\n" {
		t.Errorf("wrap of a long word = %q", got)
	}
}

// TestWriteTextInterrupted: a bench cut short shows the cells that have a
// finished run and leaves out the rest, and an experiment with none.
func TestWriteTextInterrupted(t *testing.T) {
	cells := matrix()
	for _, c := range cells[5:] {
		c.Runs = nil
	}
	var b bytes.Buffer
	WriteText(&b, cells)
	golden(t, "partial", b.Bytes())
	for _, c := range cells[:3] {
		c.Runs = nil
	}
	b.Reset()
	WriteText(&b, cells[:3])
	if b.Len() != 0 {
		t.Errorf("no finished runs printed:\n%s", b.String())
	}
}
