package sorts

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

type pair struct{ k, order int }

// Both sorts give what the slices package gives, at every length around
// the switch from the insertion sort to sort.Slice.
func TestSortsAsSlicesDoes(t *testing.T) {
	byKey := func(a, b pair) int { return cmp.Compare(a.k, b.k) }
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 3 * small {
		in := make([]pair, n)
		for i := range in {
			in[i] = pair{r.IntN(4), i}
		}
		want := slices.Clone(in)
		slices.SortStableFunc(want, byKey)
		got := slices.Clone(in)
		StableFunc(got, byKey)
		if d := gocmp.Diff(want, got, gocmp.AllowUnexported(pair{})); d != "" {
			t.Errorf("StableFunc of %d (-want +got):\n%s", n, d)
		}
		got = slices.Clone(in)
		Func(got, byKey)
		if !slices.IsSortedFunc(got, byKey) {
			t.Errorf("Func left %v unsorted", got)
		}
	}
}

// A hot thread's wait shares are sorted every refresh: a short slice costs
// no allocation.
func TestShortSortsDoNotAllocate(t *testing.T) {
	s := []pair{{3, 0}, {1, 1}, {2, 2}, {1, 3}}
	byKey := func(a, b pair) int { return cmp.Compare(a.k, b.k) }
	if n := testing.AllocsPerRun(100, func() { StableFunc(s, byKey) }); n != 0 {
		t.Errorf("sorting %d elements allocates %v times", len(s), n)
	}
}
