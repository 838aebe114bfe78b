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

// SwitchRuns is how many times the collector's sched_switch program has
// run since it was loaded (with bpf_stats enabled).
func SwitchRuns(c *Collector) (uint64, error) {
	c.life.Lock()
	defer c.life.Unlock()
	st, err := c.tracer().objs.CtxtopStacksSwitch.Stats()
	if err != nil {
		return 0, err
	}
	return st.RunCount, nil
}
