package output

import (
	"strings"
	"testing"
)

// TestUsageFromTheTable: -o's help is written from Formats, so a format
// added there is in the help of every command that takes -o, and the
// stacks a live command turns on for it are said only there.
func TestUsageFromTheTable(t *testing.T) {
	live, replay := Usage(true), Usage(false)
	for _, f := range Formats {
		for _, u := range []string{live, replay} {
			if !strings.Contains(u, f.Name) {
				t.Errorf("%q does not name the format %s", u, f.Name)
			}
			if f.Help != "" && !strings.Contains(u, f.Name+": "+f.Help) {
				t.Errorf("%q lacks %s's help %q", u, f.Name, f.Help)
			}
		}
	}
	if !strings.Contains(live, "implies --stacks") {
		t.Errorf("live help %q does not say that folded implies --stacks", live)
	}
	if strings.Contains(replay, "implies") {
		t.Errorf("replay help %q says a format turns stacks on, which a replay cannot", replay)
	}
}
