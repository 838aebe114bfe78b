package record

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// sameTasksRuns are recordings in which every kind of change meets the
// decoder's "same tasks, these moved" hint: threads that come and go, a
// rename, a reused TID, a thread that moves to another process's cgroup
// and back, keyframes often and never.
func sameTasksRuns(t *testing.T) map[string][]byte {
	t.Helper()
	runs := map[string][]byte{}
	churn := recordtest.New(200, 10, true)
	churn.CgroupsAndWaits, churn.ReadTimes = true, true
	steady := recordtest.New(200, 10, false)
	steady.CgroupsAndWaits, steady.ReadTimes, steady.Steady = true, true, true
	for name, s := range map[string]*recordtest.Synth{"churn": churn, "steady": steady} {
		in := make([]model.Sample, 40)
		for i := range in {
			in[i] = s.Next()
			// An idle thread joins another process's cgroup for a while:
			// its counters do not move, its cgroup's count does.
			if i >= 15 && i < 25 {
				in[i].Tasks[7].Cgroup = in[i].Tasks[150].Cgroup
			}
		}
		for _, key := range []time.Duration{0, 10 * time.Second} {
			runs[fmt.Sprintf("%s, keyframe every %v", name, key)] = record(t, in, WriterOptions{KeyframeEvery: key, FlushEvery: 3 * time.Second})
		}
	}
	return runs
}

// TestSameTasksAsNamesWhatChanged: a decoded sample that says it holds
// the tasks of the one before it, changed only at Moved, does; and most
// samples of a steady host say so, or the hint is not used.
func TestSameTasksAsNamesWhatChanged(t *testing.T) {
	for name, data := range sameTasksRuns(t) {
		_, got := decoded(t, data)
		seqs := map[uint64]bool{}
		hinted := 0
		for i, cur := range got {
			if cur.Seq == 0 || seqs[cur.Seq] {
				t.Errorf("%s: sample %d: Seq %d is 0 or taken", name, i, cur.Seq)
			}
			seqs[cur.Seq] = true
			if cur.SameTasksAs == 0 {
				continue
			}
			hinted++
			if i == 0 || cur.SameTasksAs != got[i-1].Seq {
				t.Errorf("%s: sample %d: SameTasksAs %d, not the Seq of the sample before it", name, i, cur.SameTasksAs)
				continue
			}
			prev := got[i-1]
			if len(prev.Tasks) != len(cur.Tasks) {
				t.Errorf("%s: sample %d: %d tasks after %d, yet the same tasks", name, i, len(cur.Tasks), len(prev.Tasks))
				continue
			}
			moved := map[int]bool{}
			for _, j := range cur.Moved {
				moved[int(j)] = true
			}
			for j := range cur.Tasks {
				if moved[j] {
					continue
				}
				if diff := cmp.Diff(prev.Tasks[j], cur.Tasks[j], cmpopts.IgnoreFields(model.TaskCounters{}, "ReadAt")); diff != "" {
					t.Errorf("%s: sample %d: task %d changed but is not in Moved (-before +now):\n%s", name, i, j, diff)
				}
			}
		}
		if hinted < len(got)/2 {
			t.Errorf("%s: %d of %d samples say which tasks moved; want most", name, hinted, len(got))
		}
	}
}

// TestComputeWithTheDecodersHintIsExact: the snapshots of a recording are
// the same whether Compute visits only the tasks the decoder says moved
// or every task.
func TestComputeWithTheDecodersHintIsExact(t *testing.T) {
	opts := model.Options{HotThreshold: 100}
	for name, data := range sameTasksRuns(t) {
		_, got := decoded(t, data)
		plain := make([]model.Sample, len(got))
		for i, s := range got {
			s.Seq, s.SameTasksAs, s.Moved = 0, 0, nil
			plain[i] = s
		}
		// One chain, then the other: the counts of threads per cgroup
		// carry over from interval to interval only along a chain.
		whole := make([]model.Snapshot, len(got))
		for i := 1; i < len(got); i++ {
			whole[i] = model.Compute(&plain[i-1], &plain[i], opts)
		}
		var hinted model.Snapshot
		for i := 1; i < len(got); i++ {
			model.ComputeInto(&hinted, &got[i-1], &got[i], opts)
			if diff := cmp.Diff(whole[i], hinted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: interval to sample %d (-every task +moved only):\n%s", name, i, diff)
			}
		}
	}
}
