package tuiadapt

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/tui/timectl"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// TestPlayerReplayShowsThePlayersRange: a Player narrowed to part of its
// recording shows the monitor that part only, sample 0 being the range's
// first: its times, rates and spikes, and the snapshots the Player gives.
func TestPlayerReplayShowsThePlayersRange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "storm.ctxrec")
	if err := tuitest.ReplayFile(path, 180, 100, 106); err != nil {
		t.Fatal(err)
	}
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := pipeline.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	marks := p.Marks()
	if !p.SetRange(marks[90].Time, marks[120].Time) {
		t.Fatal("SetRange refused a range inside the recording")
	}
	lo, hi := p.Range()
	if lo == 0 || hi == len(marks)-1 {
		t.Fatalf("range %d..%d is not inside the %d samples", lo, hi, len(marks))
	}
	facts := hostinfo.Facts{Hostname: "replay-host", Kernel: "6.1.0-test"}
	src := PlayerReplay(p, facts, "a note", nil)

	var want []timectl.Point
	spikes := 0
	for _, m := range marks[lo : hi+1] {
		want = append(want, timectl.Point{Time: m.Time, Rate: m.Rate, Spike: m.Spike.Active})
		if m.Spike.Active {
			spikes++
		}
	}
	if diff := cmp.Diff(want, src.Points()); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
	if spikes == 0 {
		t.Errorf("the range %d..%d holds none of the storm's spikes", lo, hi)
	}
	for _, i := range []int{0, 1, 12, hi - lo} {
		cs, in := src.Rates(i)
		if m := marks[lo+i]; cs != m.CSPerSec || in != m.InPerSec {
			t.Errorf("Rates(%d) = %v, %v; want sample %d's %v, %v", i, cs, in, lo+i, m.CSPerSec, m.InPerSec)
		}
		got, err := src.Seek(i)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Time.Equal(marks[lo+i].Time) {
			t.Errorf("Seek(%d) shows %v, want sample %d at %v", i, got.Time, lo+i, marks[lo+i].Time)
		}
		w, err := p.Seek(lo + i)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("Seek(%d) is not sample %d (-want +got):\n%s", i, lo+i, diff)
		}
	}
	if diff := cmp.Diff(facts, src.Facts()); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if got := src.Interval(); got != time.Second {
		t.Errorf("interval %v, want the recorded 1s", got)
	}
	if got := src.Note(); got != "a note" {
		t.Errorf("note %q", got)
	}
}
