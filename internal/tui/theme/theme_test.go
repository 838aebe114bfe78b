package theme

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// styles returns every style field of th.
func styles(th Theme) []lipgloss.Style {
	var out []lipgloss.Style
	v := reflect.ValueOf(th)
	for i := range v.NumField() {
		switch f := v.Field(i).Interface().(type) {
		case lipgloss.Style:
			out = append(out, f)
		case [3]lipgloss.Style:
			out = append(out, f[:]...)
		}
	}
	return out
}

func TestNoColorUsesOnlyAttributes(t *testing.T) {
	for _, dark := range []bool{true, false} {
		for i, s := range styles(New(true, dark)) {
			if out := s.Render("x"); hasColour(out) {
				t.Errorf("style %d with no colour emits a colour: %q", i, out)
			}
		}
	}
}

// hasColour reports an SGR parameter that sets a colour: 30-49, 90-107.
func hasColour(s string) bool {
	for _, seq := range strings.Split(s, "\x1b[")[1:] {
		end := strings.IndexByte(seq, 'm')
		if end < 0 {
			continue
		}
		for _, p := range strings.Split(seq[:end], ";") {
			n, err := strconv.Atoi(p)
			if err == nil && (n >= 30 && n <= 49 || n >= 90 && n <= 107) {
				return true
			}
		}
	}
	return false
}

func TestLightAndDarkDiffer(t *testing.T) {
	d, l := New(false, true), New(false, false)
	if d.Title.Render("x") == l.Title.Render("x") || d.Hot[2].Render("x") == l.Hot[2].Render("x") {
		t.Errorf("light and dark backgrounds get the same colours")
	}
	if !hasColour(d.Hot[2].Render("x")) {
		t.Errorf("the colour theme should colour hot rows: %q", d.Hot[2].Render("x"))
	}
}
