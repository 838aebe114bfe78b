package pace

import (
	"testing"
	"time"
)

func TestPacerSkipsMissedTicks(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	p := New(time.Second, start)
	for _, c := range []struct {
		name      string
		now, last int
		want      int
	}{
		{"on time", 1010, 1000, 2000},
		{"a slow pass ends past the next tick: skip it", 2300, 1000, 3000},
		{"after a 5 s stop, the next tick after now", 7100, 2000, 8000},
		{"served late, the next tick is too close: skip it too", 2700, 2600, 4000},
		{"exactly half an interval is allowed", 2500, 2500, 3000},
		{"before the grid starts", -50, -100, 1000},
	} {
		if got := p.Next(at(c.now), at(c.last)); !got.Equal(at(c.want)) {
			t.Errorf("%s: Next(%d, %d) = %v, want %d ms", c.name, c.now, c.last, got.Sub(start).Milliseconds(), c.want)
		}
	}
}
