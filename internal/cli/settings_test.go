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
