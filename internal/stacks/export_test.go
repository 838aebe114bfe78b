package stacks

import "github.com/ctxtop/ctxtop/internal/model"

// ReadThrough makes one refresh of c's stacks as the pipeline makes it:
// the interval's read goes through the window w into snap, and the next
// targets are chosen from snap.
func ReadThrough(c *Collector, w *model.StackWindow, snap *model.Snapshot) {
	s := c.Drain()
	w.Observe(s)
	model.AttachStacks(snap, w.Stacks(s, snap.Threads))
	c.Retarget(snap)
}
