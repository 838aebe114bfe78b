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

// checkColumns holds what the writers rely on in a row kind's table: a
// way to get each shown or written value, no title or key twice, and a
// TUI column that is a numeric thread field.
func checkColumns[P any](t *testing.T, name string, cols []Column[P]) {
	t.Helper()
	texts, keys := map[string]bool{}, map[string]bool{}
	for i := range cols {
		c := &cols[i]
		switch c.Kind {
		case Integer, Rate, Percent, Micros:
			if c.Value == nil {
				t.Errorf("%s column %d (%q): kind %d without a Value", name, i, c.TextTitle+c.JSON, c.Kind)
			}
		default:
			if c.Str == nil && (c.TextTitle != "" || c.JSONValue == nil && c.JSON != "") {
				t.Errorf("%s column %d (%q): text or name without a Str", name, i, c.TextTitle+c.JSON)
			}
		}
		if c.InTable && !Thread[c.Table].Numeric() {
			t.Errorf("%s column %d (%q): drawn in thread column %d, which has no number", name, i, c.TextTitle, c.Table)
		}
		if c.TextTitle != "" && texts[c.TextTitle] && name != "wakeup" {
			t.Errorf("%s: text title %q twice", name, c.TextTitle)
		}
		if c.JSON != "" && keys[c.JSON] {
			t.Errorf("%s: JSON key %q twice", name, c.JSON)
		}
		texts[c.TextTitle], keys[c.JSON] = true, true
	}
}

func TestRowTables(t *testing.T) {
	checkColumns(t, "process", Process[:])
	checkColumns(t, "cgroup", Cgroup[:])
	checkColumns(t, "wakeup", Wakeup[:])
}

// A process row has the rates and shares threads have, and not the
// per-thread ones (MIGR/s): the TUI leaves those out of process rows.
func TestSummed(t *testing.T) {
	for _, c := range []struct {
		id   ID
		want bool
	}{{Voluntary, true}, {Total, true}, {Wait, true}, {Migrations, false}, {EarlierWait, false}} {
		if got := Thread[c.id].Summed(); got != c.want {
			t.Errorf("Thread[%d].Summed() = %v, want %v", c.id, got, c.want)
		}
	}
}

// TestCounters checks that every model.Counter has a way into recordings:
// a name, and a task field of its own past the codec's named ones (1–15).
func TestCounters(t *testing.T) {
	names, nums := map[string]bool{}, map[int]bool{}
	for k, c := range Counters {
		if c.Name == "" || names[c.Name] {
			t.Errorf("counter %d: name %q empty or taken", k, c.Name)
		}
		if c.TaskField < 16 || nums[c.TaskField] {
			t.Errorf("counter %d (%s): task field %d below 16 or taken", k, c.Name, c.TaskField)
		}
		names[c.Name], nums[c.TaskField] = true, true
	}
}
