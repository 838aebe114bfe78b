package model

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestComputeCounters holds every Counter to the rules of a rate, so that a
// counter added to the table is tested without a test of its own.
func TestComputeCounters(t *testing.T) {
	type row struct {
		TID    int
		PerSec [NumCounters]float64
	}
	for k := range NumCounters {
		set := func(c TaskCounters, n uint64) TaskCounters { c.Counters[k] = n; return c }
		rate := func(v float64) (r [NumCounters]float64) { r[k] = v; return r }
		tests := []struct {
			name      string
			prev, cur *Sample
			want      []row
		}{
			{
				name: "moves over two seconds",
				prev: sample(0, set(task(1, 1, 5, 100, 0, 0, 0), 40)),
				cur:  sample(2*time.Second, set(task(1, 1, 5, 110, 0, 1e6, 0), 100)),
				want: []row{{1, rate(30)}},
			},
			{
				name: "new thread: no rate from the counts it made before",
				prev: sample(0, task(1, 1, 5, 0, 0, 0, 0)),
				cur:  sample(time.Second, task(1, 1, 5, 1, 0, 0, 0), set(task(1, 2, 5, 9, 0, 1e6, 0), 500)),
				want: []row{{1, rate(0)}},
			},
			{
				name: "TID reused: another thread's counts are no rate",
				prev: sample(0, set(task(1, 2, 5, 9, 0, 0, 0), 900)),
				cur:  sample(time.Second, set(task(1, 2, 6, 10, 0, 1e6, 0), 3)),
			},
			{
				name: "count went backwards: no row, never a huge rate",
				prev: sample(0, set(task(1, 2, 5, 9, 0, 0, 0), 900)),
				cur:  sample(time.Second, set(task(1, 2, 5, 10, 0, 1e6, 0), 3)),
			},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("counter %d/%s", k, tt.name), func(t *testing.T) {
				var got []row
				for _, th := range Compute(tt.prev, tt.cur, Options{}).Threads {
					got = append(got, row{th.TID, th.PerSec})
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got)\n%s", diff)
				}
			})
		}
	}
}
