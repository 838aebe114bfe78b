package report

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/report/reporttest"
)

const (
	burstTID  = reporttest.BurstTID
	burstName = reporttest.BurstName
)

func testHeader() record.Header { return reporttest.Header() }

func burstSamples(n, from, to int) []model.Sample { return reporttest.Burst(n, from, to) }

func steadySamples(n int) []model.Sample { return reporttest.Steady(n) }

// writeRecording records samples to a file in dir and returns its path.
func writeRecording(t testing.TB, dir, name string, h record.Header, samples []model.Sample) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := reporttest.Write(path, h, samples); err != nil {
		t.Fatal(err)
	}
	return path
}

// openPass opens a recording as the CLI does: the window from..to (zero:
// open) is handed to a pass while the player marks the samples.
func openPass(t testing.TB, path string, ps *Pass, from, to time.Time) *pipeline.Player {
	t.Helper()
	r, p, err := pipeline.OpenPlayer(path, model.Options{}, pipeline.Visit{From: from, To: to, Each: ps.Add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return p
}

// build is the report of a whole recording, made as the CLI makes it.
func build(t testing.TB, path string) *Report {
	t.Helper()
	ps := ForReport()
	p := openPass(t, path, ps, time.Time{}, time.Time{})
	r, err := ps.Report(p.Recording(), path, "test")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// compareFiles compares two whole recordings as the CLI does.
func compareFiles(t testing.TB, a, b string) *Diff {
	t.Helper()
	pa, pb := ForDiff(), ForDiff()
	ra, rb := openPass(t, a, pa, time.Time{}, time.Time{}).Recording(), openPass(t, b, pb, time.Time{}, time.Time{}).Recording()
	d, err := Compare(pa, pb, ra, rb, a, b, 10)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func modelOptions() model.Options { return model.Options{} }
