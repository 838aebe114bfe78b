package waketrace

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

// TestWakerKeys: the pair map's waker keys become threads, the idle task
// (whichever CPU's) or the interrupt pseudo-wakers, with no thread ID for
// the latter.
func TestWakerKeys(t *testing.T) {
	name := func(s string) *[16]int8 {
		var c [16]int8
		for i := range len(s) {
			c[i] = int8(s[i])
		}
		return &c
	}
	type waker struct {
		PID, TID int
		Comm     string
	}
	for _, tc := range []struct {
		key, pid uint32
		comm     string
		want     waker
	}{
		{4243, 4242, "pp-ping", waker{4242, 4243, "pp-ping"}},
		{keyIdle | 1, 0, "swapper/1", waker{0, 0, "swapper/1"}},
		{keyIRQ, keyIRQ, "", waker{model.WakerIRQ, model.WakerIRQ, "irq"}},
		{keySoftIRQ, keySoftIRQ, "", waker{model.WakerSoftIRQ, model.WakerSoftIRQ, "softirq"}},
		{keyTimer, keyTimer, "", waker{model.WakerTimer, model.WakerTimer, "timer"}},
	} {
		var got waker
		got.PID, got.TID, got.Comm = wakerOf(tc.key, tc.pid, name(tc.comm))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("key %#x (-want +got):\n%s", tc.key, diff)
		}
	}
}
