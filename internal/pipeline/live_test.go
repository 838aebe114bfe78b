package pipeline

import (
	"os"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/sampler"
)

// A Next asked for right after the last one (the TUI's pause toggled twice)
// waits until half an interval has passed, rather than report over a few
// milliseconds; SetInterval moves that bound.
func TestLiveNeverReportsOverATinyInterval(t *testing.T) {
	l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{os.Getpid()}}, Interval: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 2 {
		s, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		if s.Interval < 200*time.Millisecond {
			t.Errorf("report %d is over %v, less than half the 400ms interval", i, s.Interval)
		}
	}
	l.SetInterval(100 * time.Millisecond)
	s, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	if s.Interval < 50*time.Millisecond {
		t.Errorf("after SetInterval(100ms) the report is over %v, less than 50ms", s.Interval)
	}
}
