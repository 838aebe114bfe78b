package stacks

import "testing"

// TestFreeStaleForgetsGoroutineStacks: a parked goroutine's stack has no
// stack ID of its own to be freed with, so its resolved entry must go a
// window after its last use even while the scheduler's stacks it came with
// stay in use; otherwise a long run over many goroutine stacks would keep
// every one.
func TestFreeStaleForgetsGoroutineStacks(t *testing.T) {
	c := NewCollector(Options{Window: 5})
	c.cache, c.used = map[resolveKey]*resolved{}, map[int32]int{}
	for i := range 3 {
		k := resolveKey{pid: 1, kstack: 5, ustack: 6}
		k.gstack[0] = uint64(0x1000 + i)
		c.cache[k] = &resolved{usedAt: i}
	}
	c.refresh = 6
	c.freeStale()
	if len(c.cache) != 1 {
		t.Fatalf("%d resolved stacks kept, want 1 (the one used 4 refreshes ago)", len(c.cache))
	}
	for k := range c.cache {
		if k.gstack[0] != 0x1002 {
			t.Errorf("kept the stack of %#x, want 0x1002", k.gstack[0])
		}
	}
}

func TestGoFrames(t *testing.T) {
	var g [GoDepth]uint64
	if n := len(goFrames(&g)); n != 0 {
		t.Errorf("all zero: %d frames", n)
	}
	g[0], g[1], g[3] = 1, 2, 4 // a 0 ends the stack
	if got := goFrames(&g); len(got) != 2 || got[1] != 2 {
		t.Errorf("goFrames = %v, want [1 2]", got)
	}
	for i := range g {
		g[i] = uint64(i + 1)
	}
	if n := len(goFrames(&g)); n != GoDepth {
		t.Errorf("full: %d frames", n)
	}
	if goFrames(nil) != nil {
		t.Error("nil: frames")
	}
}
