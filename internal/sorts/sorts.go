// Package sorts sorts off the per-tick path with one shared
// implementation. Each element type given to slices.SortFunc links its own
// copy of pattern-defeating quicksort (about 11 KB, 20 KB for a stable
// sort with its merge); sort.Slice's single reflect-based copy serves every
// type here for a few hundred bytes each. The per-tick sorts of thread and
// process rows keep slices.SortFunc, which is faster.
package sorts

import "sort"

// small is the length up to which StableFunc runs an insertion sort
// instead of sort.SliceStable, which allocates (its swapper, the slice as
// an interface): a hot thread's few wait shares are sorted every refresh.
const small = 12

// Func sorts s by cmp, as slices.SortFunc does.
func Func[S ~[]E, E any](s S, cmp func(a, b E) int) {
	sort.Slice(s, func(i, j int) bool { return cmp(s[i], s[j]) < 0 })
}

// StableFunc sorts s by cmp keeping equal elements in order, as
// slices.SortStableFunc does.
func StableFunc[S ~[]E, E any](s S, cmp func(a, b E) int) {
	if len(s) <= small {
		insertion(s, cmp)
		return
	}
	sort.SliceStable(s, func(i, j int) bool { return cmp(s[i], s[j]) < 0 })
}

// insertion is a stable sort that allocates nothing.
func insertion[S ~[]E, E any](s S, cmp func(a, b E) int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && cmp(s[j], s[j-1]) < 0; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
