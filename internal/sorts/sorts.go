// Package sorts sorts off the per-tick path with one shared
// implementation. Each element type given to slices.SortFunc links its own
// copy of pattern-defeating quicksort (about 11 KB, 20 KB for a stable
// sort with its merge); sort.Slice's single reflect-based copy serves every
// type here for a few hundred bytes each. The per-tick sorts of thread and
// process rows keep slices.SortFunc, which is faster.
package sorts

import "sort"

// Func sorts s by cmp, as slices.SortFunc does.
func Func[S ~[]E, E any](s S, cmp func(a, b E) int) {
	sort.Slice(s, func(i, j int) bool { return cmp(s[i], s[j]) < 0 })
}

// StableFunc sorts s by cmp keeping equal elements in order, as
// slices.SortStableFunc does.
func StableFunc[S ~[]E, E any](s S, cmp func(a, b E) int) {
	sort.SliceStable(s, func(i, j int) bool { return cmp(s[i], s[j]) < 0 })
}
