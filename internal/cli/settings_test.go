package cli

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/settings"
)

// TestFlagsOverrideTheSavedViewWithoutReplacingIt: -d and --processes win
// at start, and are not written back unless changed on screen.
func TestFlagsOverrideTheSavedViewWithoutReplacingIt(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := settings.Dir()
	saved := settings.Settings{View: "cgroups", Interval: "2s", Sort: "%CPU"}
	if err := settings.Save(dir, saved); err != nil {
		t.Fatal(err)
	}
	o := options{delay: delayValue(5 * time.Second), processes: true, delayGiven: true, viewGiven: true}
	ls := loadSettings(o, true)
	if ls.interval != 5*time.Second || ls.start.View != "processes" || ls.start.Sort != "%CPU" {
		t.Errorf("start: interval %v, view %q, sort %q; want -d 5s, --processes, the saved sort", ls.interval, ls.start.View, ls.start.Sort)
	}
	// Ended as started, the sort changed on screen.
	ls.save(settings.Settings{View: "processes", Interval: "5s", Sort: "PID"})
	got, err := settings.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(settings.Settings{View: "cgroups", Interval: "2s", Sort: "PID"}, got); diff != "" {
		t.Errorf("saved (-want +got):\n%s", diff)
	}
	// Changed on screen: saved.
	ls.save(settings.Settings{Interval: "250ms", Sort: "PID"})
	if got, _ := settings.Load(dir); got.Interval != "250ms" || got.View != "" {
		t.Errorf("after changing the interval and view on screen, saved %+v", got)
	}

	// Without flags the saved interval is the refresh.
	ls = loadSettings(options{delay: delayValue(time.Second)}, true)
	if ls.interval != 250*time.Millisecond {
		t.Errorf("saved interval not used: %v", ls.interval)
	}
	// --no-config: defaults, and nothing to save with.
	ls = loadSettings(options{delay: delayValue(time.Second), noConfig: true}, true)
	if ls.save != nil || !ls.start.Equal(settings.Settings{}) || ls.interval != time.Second {
		t.Errorf("--no-config: %+v, save set %v", ls.start, ls.save != nil)
	}
}

// The footer's note at start names what the saved file changed, and
// nothing the command line set or that is the default.
func TestRestoredNote(t *testing.T) {
	for _, c := range []struct {
		name              string
		saved, start      settings.Settings
		interval          time.Duration
		viewGiven, dGiven bool
		want              string
	}{
		{"defaults", settings.Settings{Sort: "TOTAL/s"}, settings.Settings{Sort: "TOTAL/s"}, time.Second, false, false, ""},
		{"filter and view", settings.Settings{View: "processes", Filter: "java"}, settings.Settings{View: "processes", Filter: "java"}, time.Second, false, false,
			`last run's view: processes, filter "java" (--no-config ignores it)`},
		{"flags win", settings.Settings{View: "cgroups", Interval: "2s"}, settings.Settings{View: "processes"}, 5 * time.Second, true, true, ""},
		{"interval, sort, tree", settings.Settings{Interval: "250ms", Sort: "PID", Tree: true}, settings.Settings{Interval: "250ms", Sort: "PID", Tree: true}, 250 * time.Millisecond, false, false,
			"last run's view: tree, sort PID, every 250ms (--no-config ignores it)"},
		{"hostile filter", settings.Settings{Filter: "a\x1b[2Jb"}, settings.Settings{Filter: "a\x1b[2Jb"}, time.Second, false, false,
			`last run's view: filter "a?[2Jb" (--no-config ignores it)`},
		// One backslash as typed, not the two Go's quoting makes.
		{"backslash", settings.Settings{Filter: `a\b`}, settings.Settings{Filter: `a\b`}, time.Second, false, false,
			`last run's view: filter "a\b" (--no-config ignores it)`},
	} {
		if got := restoredNote(c.saved, c.start, c.interval, c.viewGiven, c.dGiven); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
