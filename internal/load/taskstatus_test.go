package load

import "testing"

func TestReadCountersSelf(t *testing.T) {
	c0, err := readSelfCounters()
	if err != nil {
		t.Fatal(err)
	}
	c1, err := readSelfCounters()
	if err != nil {
		t.Fatal(err)
	}
	if c1.Voluntary < c0.Voluntary || c1.Involuntary < c0.Involuntary {
		t.Errorf("counters went backwards: %+v then %+v", c0, c1)
	}
}
