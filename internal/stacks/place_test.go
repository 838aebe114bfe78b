package stacks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPlaceTargets checks the layout the BPF lookup relies on: a target
// in its home slot or the next free one within reach, never behind an
// empty slot, and one left out when its run of slots is full.
func TestPlaceTargets(t *testing.T) {
	in := []Target{{TID: 4096 + 7, Every: 3}, {TID: 7}, {TID: 8, Every: 2}, {TID: 0, Every: 5}, {TID: 4095}}
	want := map[uint32]stacksTarget{
		7:    {Tid: 7, Every: 1},
		8:    {Tid: 8, Every: 2},
		9:    {Tid: 4096 + 7, Every: 3},
		4095: {Tid: 4095, Every: 1},
	}
	if diff := cmp.Diff(want, placeTargets(in)); diff != "" {
		t.Errorf("placeTargets (-want +got):\n%s", diff)
	}
	// Nine TIDs with one home slot: eight fit (the probes), the last not.
	var same []Target
	for i := range 9 {
		same = append(same, Target{TID: 100 + i*targetSlots, Every: 1})
	}
	got := placeTargets(same)
	if len(got) != targetProbes {
		t.Errorf("%d of 9 TIDs sharing a slot placed, want %d: %v", len(got), targetProbes, got)
	}
	if _, ok := got[100+targetProbes]; ok {
		t.Errorf("a target placed beyond the probes: %v", got)
	}
	// At most MaxTargets.
	var many []Target
	for i := range MaxTargets + 10 {
		many = append(many, Target{TID: 1000 + i})
	}
	if got := placeTargets(many); len(got) != MaxTargets {
		t.Errorf("%d targets placed, want %d", len(got), MaxTargets)
	}
}
