package model

import (
	"slices"
	"strings"

	"github.com/ctxtop/ctxtop/internal/sorts"
)

// waitShown is how many reasons the WHY column lists at most, and
// waitMinShare the share below which one is left out (after the first).
const (
	waitShown    = 3
	waitMinShare = 0.10
)

// attachWaits gives t its wait shares, and a hot blocking thread the reason
// "blocking: futex 80%, pipe 20%" instead of the bare "blocking".
func attachWaits(t *ThreadRates, w *WaitTally, short func(string) string) {
	t.Wchan, t.Syscall = w.Wchan, w.Syscall
	asleep := 0
	for _, r := range w.Reasons {
		asleep += r.N
	}
	if asleep == 0 {
		return
	}
	t.WaitOn = make([]WaitShare, 0, len(w.Reasons))
	for _, r := range w.Reasons {
		if r.N > 0 {
			t.WaitOn = append(t.WaitOn, WaitShare{r.Reason, float64(r.N) / float64(asleep)})
		}
	}
	sorts.StableFunc(t.WaitOn, func(a, b WaitShare) int {
		switch {
		case a.Share > b.Share:
			return -1
		case a.Share < b.Share:
			return 1
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	if t.HotBlocking() && t.Why.Kind == Blocking {
		t.Why.On = blockingShares(t.WaitOn, short)
	}
}

// blockingShares are shares in the WHY column's short words, adding up
// reasons that share one ("pipe read" and "pipe write" are both "pipe"),
// biggest first.
func blockingShares(shares []WaitShare, short func(string) string) []WaitShare {
	words := make([]WaitShare, 0, len(shares))
	for _, s := range shares {
		w := s.Reason
		if short != nil {
			w = short(s.Reason)
		}
		if i := slices.IndexFunc(words, func(x WaitShare) bool { return x.Reason == w }); i >= 0 {
			words[i].Share += s.Share
			continue
		}
		words = append(words, WaitShare{w, s.Share})
	}
	sorts.StableFunc(words, func(a, b WaitShare) int {
		switch {
		case a.Share > b.Share:
			return -1
		case a.Share < b.Share:
			return 1
		}
		return 0
	})
	return words
}
