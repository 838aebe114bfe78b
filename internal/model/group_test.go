package model

import "testing"

func TestThreadGroup(t *testing.T) {
	for in, want := range map[string]string{
		"pool-1-thread-7": "pool-*-thread-*", "java": "java", "12": "*",
		"kworker/0:1H": "kworker/*", "kworker/0:1H-kblockd": "kworker/*", "kworker/u8:0-events_unbound": "kworker/*",
		"kworker/R-rcu_gp": "kworker/*", "ksoftirqd/1": "ksoftirqd/*",
	} {
		if got := ThreadGroup(in); got != want {
			t.Errorf("ThreadGroup(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGroupAcrossProcesses(t *testing.T) {
	for pat, want := range map[string]bool{
		"kworker/*": true, "ksoftirqd/*": true, "migration/*": true, "pool-*-thread-*": false, "java": false,
	} {
		if got := GroupAcrossProcesses(pat); got != want {
			t.Errorf("GroupAcrossProcesses(%q) = %v, want %v", pat, got, want)
		}
	}
}
