package stacks

// Rename forgets the names resolved for process pid's stacks, so that the
// next Drain names them again: its JIT has just written a perf map, and a
// stack in steady use would otherwise keep the bare addresses it was
// first resolved with for as long as it stays in use.
func (c *Collector) Rename(pid int) {
	c.life.Lock()
	defer c.life.Unlock()
	for k := range c.cache {
		if k.pid == pid {
			delete(c.cache, k)
		}
	}
}
