package record

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// v1Samples are the samples testdata/v1-steady.ctxrec holds: written by
// the format-1 writer (8-second keyframes, 4-second chunks) from this
// made-up host, with steady threads, churn, cgroups and wait looks.
func v1Samples() []model.Sample {
	s := recordtest.New(40, 10, true)
	s.Steady = true
	s.CgroupsAndWaits = true
	out := make([]model.Sample, 12)
	for i := range out {
		out[i] = s.Next()
	}
	return out
}

// A file written by an older ctxtop must replay as it did when written.
func TestVersion1FileReadsExactly(t *testing.T) {
	data, err := os.ReadFile("testdata/v1-steady.ctxrec")
	if err != nil {
		t.Fatal(err)
	}
	r, got := decoded(t, data)
	if r.Header.Version != 1 {
		t.Errorf("header version = %d, want 1", r.Header.Version)
	}
	if diff := cmp.Diff(testHeader().Start, r.Header.Start, sampleCmp...); diff != "" {
		t.Errorf("header start (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(v1Samples(), got, sampleCmp...); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes = %q, want none", r.Notes)
	}
}
