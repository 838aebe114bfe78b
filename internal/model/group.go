package model

import "strings"

// ThreadGroup collapses every run of digits in a thread name to "*", so the
// members of a pool (pool-1-thread-7, pool-1-thread-8) share one name.
// Kernel workers are one family whatever they serve: kworker/0:1H-kblockd,
// kworker/u8:0-events_unbound and kworker/R-rcu_gp all group as kworker/*.
func ThreadGroup(name string) string {
	if strings.HasPrefix(name, "kworker/") {
		return "kworker/*"
	}
	var b strings.Builder
	inDigits := false
	for _, r := range name {
		if r >= '0' && r <= '9' {
			if !inDigits {
				b.WriteByte('*')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteRune(r)
	}
	return b.String()
}

// ProcessGroup is the group of a process by its name, for every view that
// groups processes: the monitor's g in the process view and the exporter's
// group label. It is ThreadGroup's rule, so processes started as worker-1,
// worker-2 ... (one per shard, per CPU) are one group, worker-*, and the
// kernel's per-CPU threads (ksoftirqd/0, kworker/1:2) one per family; a
// name without digits is its own group.
func ProcessGroup(name string) string { return ThreadGroup(name) }

// kernelFamilies are the kernel's per-CPU and pooled thread families. Each
// member is a process of its own, so grouping threads within a process would
// never bring them together.
var kernelFamilies = []string{"kworker/", "ksoftirqd/", "migration/", "cpuhp/", "idle_inject/", "rcuop/", "rcuos/", "rcuog/", "irq/", "watchdog/"}

// GroupAcrossProcesses reports whether threads of the group pattern are
// one family across processes (kernel threads such as kworker/*), rather
// than a pool inside one process.
func GroupAcrossProcesses(pattern string) bool {
	for _, f := range kernelFamilies {
		if strings.HasPrefix(pattern, f) {
			return true
		}
	}
	return false
}
