package model

import "testing"

func TestThreadGroup(t *testing.T) {
	for in, want := range map[string]string{
		"pool-1-thread-7": "pool-*-thread-*", "kworker/0:1H": "kworker/*:*H", "java": "java", "12": "*",
	} {
		if got := ThreadGroup(in); got != want {
			t.Errorf("ThreadGroup(%q) = %q, want %q", in, got, want)
		}
	}
}
