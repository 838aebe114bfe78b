package fields

import "testing"

// TestThreadTable checks what the views rely on without checking it
// themselves: each entry sits at its ID, numeric fields say how to format
// them, shown ones have a width, and no two share a title or a key.
func TestThreadTable(t *testing.T) {
	titles, texts, keys := map[string]ID{}, map[string]ID{}, map[string]ID{}
	for i := range Thread {
		f := &Thread[i]
		if f.ID != ID(i) {
			t.Errorf("entry %d has ID %d", i, f.ID)
		}
		if f.Numeric() != (f.Kind != Text) && f.Title != "" {
			t.Errorf("%q: numeric %v but kind %d", f.Title, f.Numeric(), f.Kind)
		}
		if f.Numeric() && f.JSONValue != nil {
			t.Errorf("%q: numeric fields write their Value, not JSONValue", f.JSON)
		}
		if !f.Numeric() && f.JSON != "" && f.JSONValue == nil {
			t.Errorf("%q: a text field with a JSON key needs a JSONValue", f.JSON)
		}
		if f.Shown() && (f.Width <= 0 || f.Priority <= 0) {
			t.Errorf("%q: shown with width %d, priority %d", f.Title, f.Width, f.Priority)
		}
		for _, c := range []struct {
			m map[string]ID
			k string
		}{{titles, f.Title}, {texts, f.TextTitle}, {keys, f.JSON}} {
			if c.k == "" {
				continue
			}
			if j, ok := c.m[c.k]; ok {
				t.Errorf("fields %d and %d both use %q", j, i, c.k)
			}
			c.m[c.k] = ID(i)
		}
	}
}
