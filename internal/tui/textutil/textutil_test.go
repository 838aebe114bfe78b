package textutil

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSparklineScalesAndAligns(t *testing.T) {
	if got, want := Sparkline([]float64{0, 1, 2, 4}, 6), "  ▁▂▅█"; got != want {
		t.Errorf("Sparkline = %q, want %q", got, want)
	}
	if got := Sparkline([]float64{1, 2, 3, 4, 5}, 3); Width(got) != 3 || !strings.HasSuffix(got, "█") {
		t.Errorf("Sparkline keeps the newest values at the right edge: %q", got)
	}
}

// An interval without a figure is a gap, never the bottom row a 0 draws.
func TestSparklineGapForNaN(t *testing.T) {
	if got, want := Sparkline([]float64{0, 1, math.NaN(), 4}, 4), "▁▂ █"; got != want {
		t.Errorf("Sparkline = %q, want %q", got, want)
	}
}

func TestFitClips(t *testing.T) {
	got := Fit("abcdef\nxy\nz\nw", 3, 2)
	if got != "abc\nxy" {
		t.Errorf("Fit = %q", got)
	}
}

func TestBar(t *testing.T) {
	if got := Bar(5, 10, 4); got != "██  " {
		t.Errorf("Bar(5,10,4) = %q", got)
	}
	if got := Bar(0, 0, 3); got != "   " {
		t.Errorf("Bar with no data = %q", got)
	}
}

// One spike must not flatten the rest: on the log scale a baseline that
// doubles still shows, and the spike is the top row.
func TestSparklineSpikeKeepsHistoryReadable(t *testing.T) {
	var vals []float64
	for i := range 60 {
		vals = append(vals, float64(100+100*(i%2)))
	}
	vals = append(vals, 100_000)
	got := []rune(Sparkline(vals, len(vals)))
	if got[0] == got[1] {
		t.Errorf("100 and 200 drew alike (%q) next to a spike: the history is flat", string(got[:2]))
	}
	if got[len(got)-1] != '█' {
		t.Errorf("the spike drew %q, want the top row", got[len(got)-1])
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w    int
		want []string
	}{
		{"fits  as written", 20, []string{"fits  as written"}},
		{"highlighted, stronger at 10× and 100× --hot.", 40, []string{"highlighted, stronger at 10× and 100×", "--hot."}},
		{"a cross-CPU wake-up", 12, []string{"a cross-CPU", "wake-up"}},
		{"unbreakable-word-here ok", 10, []string{"unbreakab…", "ok"}},
		{"x", 0, nil},
	} {
		if diff := cmp.Diff(tc.want, Wrap(tc.s, tc.w)); diff != "" {
			t.Errorf("Wrap(%q, %d) (-want +got):\n%s", tc.s, tc.w, diff)
		}
	}
}
