package tui

import (
	"strings"
	"testing"
)

// TestDemoGoroutineStepHonest: goroutine hand-offs make the runtime's
// threads switch thousands of times a second, so the step must not tell an
// audience there is no context switch at all, and must say so within the 80
// columns the caption is cut to.
func TestDemoGoroutineStepHonest(t *testing.T) {
	for _, s := range demoSteps {
		if s.mode != "goroutine" {
			continue
		}
		if strings.Contains(s.caption, "no context switch") || !strings.Contains(s.caption, "runtime's own threads still switch") || len([]rune(s.caption)) > 80 {
			t.Errorf("goroutine step says %q", s.caption)
		}
		return
	}
	t.Error("no goroutine step in the demo")
}
