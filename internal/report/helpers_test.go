package report

import (
	"path/filepath"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
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

// openPlayer opens a recording as the CLI does.
func openPlayer(t testing.TB, path string) *record.Player {
	t.Helper()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	p, err := record.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func modelOptions() model.Options { return model.Options{} }
