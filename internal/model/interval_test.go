package model

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// readAt is task with its counters read at off after its sample's Time.
func readAt(off time.Duration, t TaskCounters) TaskCounters {
	t.ReadAt = off
	return t
}

type waitRate struct {
	CPU, Wait, Vol float64
	Earlier        time.Duration
}

// A pass takes tens of milliseconds over a big host, more when the monitor
// is preempted, so a thread is read at another offset into each pass: its
// rates are over the time between its own reads, not between pass starts.
func TestRatesAreOverEachTasksOwnInterval(t *testing.T) {
	tests := []struct {
		name      string
		prev, cur *Sample
		want      []waitRate
	}{
		{
			name: "read 30 ms later in this pass than in the last: a spinner is at 100%, not 103%",
			prev: sample(0, readAt(0, task(1, 1, 5, 0, 0, 0, 0))),
			cur:  sample(time.Second, readAt(30*time.Millisecond, task(1, 1, 5, 1030, 0, 1.03e9, 0))),
			want: []waitRate{{CPU: 100, Vol: 1000}},
		},
		{
			name: "read 30 ms earlier: 100%, not 97%",
			prev: sample(0, readAt(30*time.Millisecond, task(1, 1, 5, 0, 0, 0, 0))),
			cur:  sample(time.Second, readAt(0, task(1, 1, 5, 970, 0, 0.97e9, 0))),
			want: []waitRate{{CPU: 100, Vol: 1000}},
		},
		{
			name: "a run-queue wait longer than the interval: the part that cannot fit began earlier",
			prev: sample(0, task(1, 1, 5, 0, 0, 0, 0)),
			cur:  sample(time.Second, task(1, 1, 5, 0, 1, 1e8, 1.2e9)),
			want: []waitRate{{CPU: 10, Wait: 90, Earlier: 300 * time.Millisecond}},
		},
		{
			name: "a wait that fits is all of this interval's",
			prev: sample(0, task(1, 1, 5, 0, 0, 0, 0)),
			cur:  sample(time.Second, task(1, 1, 5, 0, 1, 3e8, 5e8)),
			want: []waitRate{{CPU: 30, Wait: 50}},
		},
		{
			name: "run time past the interval (the kernel updates it at ticks): no room for wait",
			prev: sample(0, task(1, 1, 5, 0, 0, 0, 0)),
			cur:  sample(time.Second, task(1, 1, 5, 0, 1, 1.002e9, 5e6)),
			want: []waitRate{{CPU: 100.2, Earlier: 5 * time.Millisecond}},
		},
		{
			name: "read times that leave no time between the reads (a damaged recording): no rate",
			prev: sample(0, readAt(900*time.Millisecond, task(1, 1, 5, 0, 0, 0, 0))),
			cur:  sample(500*time.Millisecond, readAt(0, task(1, 1, 5, 10, 0, 1e6, 0))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Compute(tt.prev, tt.cur, Options{})
			var got []waitRate
			for _, th := range s.Threads {
				got = append(got, waitRate{th.CPUPercent, th.WaitPercent, th.VoluntaryPerSec, th.EarlierWait})
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("rates (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProcessSumsEarlierWait(t *testing.T) {
	prev := sample(0, task(1, 1, 5, 0, 0, 0, 0), task(1, 2, 5, 0, 0, 0, 0))
	cur := sample(time.Second, task(1, 1, 5, 0, 1, 1e8, 1.2e9), task(1, 2, 5, 0, 1, 5e8, 7e8))
	s := Compute(prev, cur, Options{})
	if len(s.Processes) != 1 {
		t.Fatalf("processes = %+v, want one", s.Processes)
	}
	p := s.Processes[0]
	got := waitRate{CPU: p.CPUPercent, Wait: p.WaitPercent, Earlier: p.EarlierWait}
	want := waitRate{CPU: 60, Wait: 140, Earlier: 500 * time.Millisecond}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("process sums (-want +got):\n%s", diff)
	}
}

// simTask is a thread whose life is a run of segments: running, waiting on
// a run queue, or asleep. Its counters are what the kernel shows: run time
// as it runs, a run-queue wait added whole when the wait ends (the thread
// gets a CPU).
type simTask struct {
	ends  []time.Duration // segment i ends at ends[i]
	kinds []byte          // 'r' running, 'w' waiting, 's' asleep
}

func newSimTask(rng *rand.Rand, until time.Duration) *simTask {
	st := &simTask{}
	var at time.Duration
	for at < until {
		var k byte
		var d time.Duration
		switch rng.IntN(3) {
		case 0:
			k, d = 'r', time.Duration(rng.Int64N(int64(300*time.Millisecond)))
		case 1:
			// Waits up to three intervals long: a starved thread.
			k, d = 'w', time.Duration(rng.Int64N(int64(3*time.Second)))
		default:
			k, d = 's', time.Duration(rng.Int64N(int64(500*time.Millisecond)))
		}
		at += d + 1
		st.ends = append(st.ends, at)
		st.kinds = append(st.kinds, k)
	}
	return st
}

// counters are the run and wait ns the kernel shows at time at, and the
// run time within [from, at] for checking.
func (st *simTask) counters(at time.Duration) (run, wait uint64) {
	var begin time.Duration
	for i, end := range st.ends {
		switch st.kinds[i] {
		case 'r':
			run += uint64(min(end, at) - min(begin, at))
		case 'w':
			if end <= at {
				wait += uint64(end - begin)
			}
		}
		begin = end
	}
	return run, wait
}

// For counters as the kernel keeps them, read at any offset into each pass,
// CPU% is exactly the share of the thread's own interval it ran, and
// CPU%+WAIT% never passes 100: a wait the kernel reports late goes to
// EarlierWait, in full.
func TestWaitNeverPassesTheTasksInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const passes = 40
	sim := []*simTask{newSimTask(rng, (passes+1)*time.Second), newSimTask(rng, (passes+1)*time.Second), newSimTask(rng, (passes+1)*time.Second)}
	var prev *Sample
	var prevRead []time.Duration
	for k := range passes {
		start := time.Duration(k) * time.Second
		cur := sample(start)
		reads := make([]time.Duration, len(sim))
		for i, st := range sim {
			// Anywhere up to 300 ms into the pass, as a preempted
			// monitor reads a thread.
			off := time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
			reads[i] = start + off
			run, wait := st.counters(reads[i])
			cur.Tasks = append(cur.Tasks, readAt(off, task(1, 1+i, 5, 0, 0, run, wait)))
		}
		if prev != nil {
			s := Compute(prev, cur, Options{})
			for _, th := range s.Threads {
				i := th.TID - 1
				span := reads[i] - prevRead[i]
				run0, wait0 := sim[i].counters(prevRead[i])
				run1, wait1 := sim[i].counters(reads[i])
				wantCPU := float64(run1-run0) / float64(span) * 100
				if math.Abs(th.CPUPercent-wantCPU) > 1e-9 {
					t.Errorf("pass %d, task %d: CPU%% = %v, want %v (ran %v of its %v)", k, th.TID, th.CPUPercent, wantCPU, time.Duration(run1-run0), span)
				}
				if th.CPUPercent+th.WaitPercent > 100+1e-9 {
					t.Errorf("pass %d, task %d: CPU%% %v + WAIT%% %v passes 100", k, th.TID, th.CPUPercent, th.WaitPercent)
				}
				got := th.WaitPercent/100*float64(span) + float64(th.EarlierWait)
				if math.Abs(got-float64(wait1-wait0)) > 2 {
					t.Errorf("pass %d, task %d: WAIT%% %v of %v plus earlier %v = %v ns, want the %v ns the kernel added",
						k, th.TID, th.WaitPercent, span, th.EarlierWait, got, wait1-wait0)
				}
			}
		}
		prev, prevRead = cur, reads
	}
}
