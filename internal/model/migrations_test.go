package model

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestComputeMigrations(t *testing.T) {
	migr := func(c TaskCounters, n uint64) TaskCounters { c.Migrations = n; return c }
	type row struct {
		TID  int
		Migr float64
	}
	tests := []struct {
		name      string
		prev, cur *Sample
		want      []row
	}{
		{
			name: "moves over two seconds",
			prev: sample(0, migr(task(1, 1, 5, 100, 0, 0, 0), 40)),
			cur:  sample(2*time.Second, migr(task(1, 1, 5, 110, 0, 1e6, 0), 100)),
			want: []row{{1, 30}},
		},
		{
			name: "new thread: no rate from the moves it made before",
			prev: sample(0, task(1, 1, 5, 0, 0, 0, 0)),
			cur:  sample(time.Second, task(1, 1, 5, 1, 0, 0, 0), migr(task(1, 2, 5, 9, 0, 1e6, 0), 500)),
			want: []row{{1, 0}},
		},
		{
			name: "TID reused: another thread's moves are no rate",
			prev: sample(0, migr(task(1, 2, 5, 9, 0, 0, 0), 900)),
			cur:  sample(time.Second, migr(task(1, 2, 6, 10, 0, 1e6, 0), 3)),
		},
		{
			name: "moves went backwards: no row, never a huge rate",
			prev: sample(0, migr(task(1, 2, 5, 9, 0, 0, 0), 900)),
			cur:  sample(time.Second, migr(task(1, 2, 5, 10, 0, 1e6, 0), 3)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []row
			for _, th := range Compute(tt.prev, tt.cur, Options{}).Threads {
				got = append(got, row{th.TID, th.MigrationsPerSec})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
