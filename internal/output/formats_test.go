package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Every -o name finds its own format, and its writer writes a report.
func TestFormatsLookupAndWrite(t *testing.T) {
	if diff := cmp.Diff([]string{"text", "json", "folded"}, Names()); diff != "" {
		t.Errorf("Names() (-want +got):\n%s", diff)
	}
	for i := range Formats {
		f, err := Lookup(Formats[i].Name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", Formats[i].Name, err)
		}
		if f != &Formats[i] {
			t.Errorf("Lookup(%q) = %q", Formats[i].Name, f.Name)
		}
		var b bytes.Buffer
		if err := f.New(&b, Options{}).Write(snapshot()); err != nil {
			t.Errorf("%s: Write: %v", f.Name, err)
		}
		// Folded prints nothing for a snapshot without stacks.
		if b.Len() == 0 && !f.Stacks {
			t.Errorf("%s: wrote nothing", f.Name)
		}
	}
}

func TestLookupUnknownListsTheFormats(t *testing.T) {
	_, err := Lookup("yaml")
	if err == nil || err.Error() != "want text, json or folded" {
		t.Errorf("Lookup(yaml) error = %v, want %q", err, "want text, json or folded")
	}
	if got := List("|"); got != "text|json|folded" {
		t.Errorf("List(|) = %q", got)
	}
}

// The folded writer made from Options explains an empty output by the
// --hot it was given.
func TestFoldedFormatEndsWithHot(t *testing.T) {
	f, err := Lookup("folded")
	if err != nil {
		t.Fatal(err)
	}
	w := f.New(&bytes.Buffer{}, Options{Hot: 2500})
	e, ok := w.(Ender)
	if !ok {
		t.Fatalf("folded writer %T has no End", w)
	}
	if got := e.End(); !strings.Contains(got, "2500 switches/s") {
		t.Errorf("End() = %q, want it to name --hot 2500", got)
	}
}
