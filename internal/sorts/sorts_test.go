package sorts

import (
	"cmp"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

type pair struct{ k, order int }

func TestSortsAsSlicesDoes(t *testing.T) {
	in := []pair{{3, 0}, {1, 1}, {2, 2}, {1, 3}, {3, 4}, {0, 5}, {2, 6}, {1, 7}}
	byKey := func(a, b pair) int { return cmp.Compare(a.k, b.k) }

	want := slices.Clone(in)
	slices.SortStableFunc(want, byKey)
	got := slices.Clone(in)
	StableFunc(got, byKey)
	if d := gocmp.Diff(want, got, gocmp.AllowUnexported(pair{})); d != "" {
		t.Errorf("StableFunc (-want +got):\n%s", d)
	}

	got = slices.Clone(in)
	Func(got, byKey)
	if !slices.IsSortedFunc(got, byKey) {
		t.Errorf("Func left %v unsorted", got)
	}
}
