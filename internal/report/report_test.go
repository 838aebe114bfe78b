package report

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
)

func TestReportNamesTheSpikeAndTheThreadThatCausedIt(t *testing.T) {
	dir := t.TempDir()
	path := writeRecording(t, dir, "burst.ctxrec", testHeader(), burstSamples(60, 30, 36))
	r := build(t, path)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("REPORT_OUT"); out != "" {
		os.WriteFile(out, buf.Bytes(), 0o644)
	}
	if len(r.Spikes) != 1 {
		t.Fatalf("spikes = %d, want 1: %+v", len(r.Spikes), r.Spikes)
	}
	s := r.Spikes[0]
	if len(s.Threads) == 0 || s.Threads[0].TID != burstTID || s.Threads[0].Comm != burstName {
		t.Errorf("busiest thread in the spike = %+v, want %s %d", s.Threads, burstName, burstTID)
	}
	if !strings.Contains(buf.String(), burstName) {
		t.Errorf("the page does not name %s", burstName)
	}
}

// replayPass hands a pass the window from..to as ctxtop replay plays it:
// a player marked first, then its range stepped through Next.
func replayPass(t *testing.T, path string, ps *Pass, from, to time.Time) *record.Recording {
	t.Helper()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	p, err := pipeline.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.SetRange(from, to) {
		t.Fatalf("no sample in %v..%v", from, to)
	}
	p.FoldStacks(true)
	for {
		snap, err := p.Next()
		if errors.Is(err, pipeline.ErrEnd) {
			return r
		}
		if err != nil {
			t.Fatal(err)
		}
		ps.Add(&snap)
	}
}

// The report and the comparison are gathered while the player marks the
// samples, in one pass; every figure, spike verdict and stack must be the
// one replay shows for the same window.
func TestOnePassIsWhatReplayShows(t *testing.T) {
	path := writeRecording(t, t.TempDir(), "burst.ctxrec", testHeader(), burstSamples(90, 40, 46))
	start := testHeader().Start
	from, to := start.Add(10*time.Second), start.Add(80*time.Second)
	all := cmp.Exporter(func(reflect.Type) bool { return true })
	ignore := cmpopts.IgnoreFields(Report{}, "Generated")

	one := ForReport()
	rec := openPass(t, path, one, from, to).Recording()
	got, err := one.Report(rec, path, "test")
	if err != nil {
		t.Fatal(err)
	}
	replay := ForReport()
	want, err := replay.Report(replayPass(t, path, replay, from, to), path, "test")
	if err != nil {
		t.Fatal(err)
	}
	if want.Intervals != 70 || len(want.Spikes) != 1 || !want.HasStacks || !want.HasWakeups {
		t.Fatalf("replay's report: %d intervals, %d spikes, stacks %v, wake-ups %v; want 70, 1, true, true",
			want.Intervals, len(want.Spikes), want.HasStacks, want.HasWakeups)
	}
	if d := cmp.Diff(want, got, all, ignore, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("report (-replay +one pass):\n%s", d)
	}

	a, b := ForDiff(), ForDiff()
	recB := openPass(t, path, b, from, to).Recording()
	gotDiff, err := Compare(a, b, replayPass(t, path, a, time.Time{}, time.Time{}), recB, path, path, 10)
	if err != nil {
		t.Fatal(err)
	}
	a, b = ForDiff(), ForDiff()
	wantDiff, err := Compare(a, b, replayPass(t, path, a, time.Time{}, time.Time{}), replayPass(t, path, b, from, to), path, path, 10)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantDiff, gotDiff, all, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("comparison (-replay +one pass):\n%s", d)
	}
}

// ctxtop report reads a recording once (pipeline.OpenPlayer): the report of
// that pass, over the whole file or a window, is the one a pass after
// opening it makes.
func TestReportOfTheReadingPassIsTheSame(t *testing.T) {
	path := writeRecording(t, t.TempDir(), "burst.ctxrec", testHeader(), burstSamples(90, 40, 46))
	start := testHeader().Start
	all := cmp.Exporter(func(reflect.Type) bool { return true })
	ignore := cmpopts.IgnoreFields(Report{}, "Generated")
	for _, w := range [][2]time.Time{{}, {start.Add(10 * time.Second), start.Add(80 * time.Second)}} {
		want, err := func() (*Report, error) {
			ps := ForReport()
			return ps.Report(openPass(t, path, ps, w[0], w[1]).Recording(), path, "test")
		}()
		if err != nil {
			t.Fatal(err)
		}
		ps := ForReport()
		r, _, err := pipeline.OpenPlayer(path, model.Options{}, pipeline.Visit{From: w[0], To: w[1], Each: ps.Add})
		if err != nil {
			t.Fatal(err)
		}
		got, err := ps.Report(r, path, "test")
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got.Intervals < 70 {
			t.Fatalf("window %v: %d intervals, want at least 70", w, got.Intervals)
		}
		if d := cmp.Diff(want, got, all, ignore, cmpopts.EquateNaNs()); d != "" {
			t.Errorf("window %v: report (-open then pass +reading pass):\n%s", w, d)
		}
	}
}
