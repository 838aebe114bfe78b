package waketrace

import "github.com/ctxtop/ctxtop/internal/model"

// Snapshot is Read turned into rates, as the pipeline turns it, for the
// tests and benchmarks, which have no Sample to carry it. Each call
// drains the maps as Read does.
func (c *Collector) Snapshot() *model.Wakeups {
	c.life.Lock()
	prev := c.prev
	var prevCopy *model.WakeupSample
	if prev != nil {
		prevCopy = &model.WakeupSample{Time: prev.Time, Dropped: prev.Dropped, CPUs: append([]model.CPUSchedCount(nil), prev.CPUs...)}
	}
	c.life.Unlock()
	raw, why := c.Read()
	if why != "" {
		return &model.Wakeups{Unavailable: why}
	}
	if raw == nil {
		return nil
	}
	w := model.ComputeWakeups(prevCopy, raw.Since, raw)
	return &w
}
