package loadpanel

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestView(t *testing.T) {
	st := State{Mode: "futex", Pinning: "both on CPU 0", Running: true, Elapsed: "4.2s", NsPerRoundTrip: 5412, RoundTrips: 776_001, LoadSwitches: 369_550}
	demo := &Demo{Step: 2, Steps: 6, Title: "futex, one CPU", Caption: "The same pair pinned to one CPU.", Remaining: "7s", SystemCS: 371_020,
		Results: []Result{{Step: "idle baseline", SystemCS: 1_812, Sampled: true}, {Step: "futex, unpinned", NsPerRoundTrip: 41_230, NsPerSwitch: 20_615, SystemCS: 49_870, Sampled: true}, {Step: "futex, one CPU", NsPerRoundTrip: 5_100}}}
	for _, sz := range tuitest.Sizes {
		for _, c := range []struct {
			name string
			demo *Demo
		}{{"load", nil}, {"demo", demo}} {
			t.Run(sz.Name+"-"+c.name, func(t *testing.T) {
				m := New(theme.New(false, true))
				m.SetSize(sz.Width, sz.Height-6)
				m.SetState(st, c.demo)
				got := tuitest.Render(t, m.View(), colorprofile.Ascii)
				tuitest.CheckFits(t, got, sz.Width, sz.Height-6)
				tuitest.Golden(t, sz.Name+"-"+c.name, got)
			})
		}
	}
}

// TestViewThreaded: a threaded mode (pool) makes no round trips, so it
// shows its units per second, in all and per thread, as ctxtop load does;
// a note on the last key takes the third line.
func TestViewThreaded(t *testing.T) {
	st := State{Mode: "pool, 2 threads", Pinning: "no pinning", Running: true, Elapsed: "3.0s", NsPerRoundTrip: 100_000, RoundTrips: 60_000,
		Threads: 2, Unit: "item", Units: "items", LoadSwitches: 812,
		Note: "pool mode cannot be pinned: it shows what the scheduler does with its threads"}
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true))
			m.SetSize(sz.Width, 3)
			m.SetState(st, nil)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, 3)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestBigDigits(t *testing.T) {
	b := Big("1,0")
	want := [3]string{"▀█    █▀█", " █    █ █", "▄█▄ ▄ █▄█"}
	if b != want {
		t.Errorf("Big(\"1,0\") =\n%s\nwant\n%s", strings.Join(b[:], "\n"), strings.Join(want[:], "\n"))
	}
}
