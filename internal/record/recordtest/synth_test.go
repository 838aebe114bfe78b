package recordtest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The size benchmark's case is 50 threads busy every second and 950 idle:
// every steady busy thread must move in every sample, and no other.
func TestSteadyHostMovesItsBusyThreadsEverySecond(t *testing.T) {
	s := New(1000, 50, false)
	s.Steady = true
	prev := s.Next()
	for n := range 120 {
		cur := s.Next()
		moved := 0
		for i := range cur.Tasks {
			p, c := prev.Tasks[i], cur.Tasks[i]
			if c.VoluntarySwitches != p.VoluntarySwitches {
				moved++
				// A thread waking 100–1,000 times a second, each wake
				// running and waiting a few µs.
				if v := c.VoluntarySwitches - p.VoluntarySwitches; v < 90 || v > 1100 {
					t.Errorf("sample %d: task %d woke %d times, want 90–1,100", n, c.TID, v)
				}
				if c.RunNs == p.RunNs || c.WaitNs == p.WaitNs {
					t.Errorf("sample %d: task %d switched without running or waiting", n, c.TID)
				}
			}
		}
		if diff := cmp.Diff(50, moved); diff != "" {
			t.Errorf("sample %d: busy threads (-want +got):\n%s", n, diff)
		}
		prev = cur
	}
}
