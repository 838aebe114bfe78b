package record

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

// flickering is a run whose busy threads change every sample: a thread
// runs, rests a sample or two, runs again; now and then one is renamed,
// reused (a new start time, counters from zero), or exits, and a thread
// is born. The decoder updates its task list in place between frames
// that add or remove no task; a thread that moved in one frame and
// rested in the next is what that must not get wrong.
func flickering(n int) []model.Sample {
	rng := rand.New(rand.NewPCG(3, 4))
	var tasks []model.TaskCounters
	for i := range 80 {
		pid := 100 + i/8*8
		tasks = append(tasks, model.TaskCounters{PID: pid, TID: 100 + i, Comm: fmt.Sprintf("w%d", i%8), ProcessComm: fmt.Sprintf("p%d", pid),
			StartTime: uint64(50 + i), VoluntarySwitches: uint64(rng.IntN(1e5)), RunNs: uint64(rng.Int64N(1e10)), CPUsAllowed: "0-1", State: 'S'})
	}
	sys := model.SystemCounters{ContextSwitches: 1e6, Interrupts: 1e5, CPUs: 2}
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	out := make([]model.Sample, n)
	for k := range out {
		for i := range tasks {
			t := &tasks[i]
			t.ReadAt = time.Duration(i*(1+k%3)) * time.Microsecond
			if rng.IntN(3) != 0 {
				continue
			}
			t.VoluntarySwitches += uint64(1 + rng.IntN(500))
			t.InvoluntarySwitches += uint64(rng.IntN(20))
			t.RunNs += uint64(rng.Int64N(5e7))
			t.WaitNs += uint64(rng.Int64N(1e6))
			t.Timeslices += uint64(1 + rng.IntN(50))
			t.LastCPU = rng.IntN(2)
		}
		switch {
		case k%7 == 3:
			tasks[rng.IntN(len(tasks))].Comm = fmt.Sprintf("renamed-%d", k)
		case k%11 == 5:
			t := &tasks[rng.IntN(len(tasks))]
			t.StartTime += 1000
			t.VoluntarySwitches, t.InvoluntarySwitches, t.RunNs, t.WaitNs = 1, 0, 10, 0
		case k%13 == 8:
			i := rng.IntN(len(tasks))
			tasks = append(tasks[:i], tasks[i+1:]...)
		case k%17 == 9:
			last := tasks[len(tasks)-1]
			last.TID++
			last.StartTime++
			tasks = append(tasks, last)
		}
		sys.ContextSwitches += uint64(rng.IntN(5000))
		out[k] = model.Sample{Time: start.Add(time.Duration(k) * time.Second), System: sys,
			Tasks: append([]model.TaskCounters(nil), tasks...)}
	}
	return out
}

func TestRoundTripOfFlickeringThreads(t *testing.T) {
	in := flickering(80)
	for _, keyEvery := range []time.Duration{15 * time.Second, time.Hour} {
		data := record(t, in, WriterOptions{FlushEvery: 4 * time.Second, KeyframeEvery: keyEvery})
		_, got := decoded(t, data)
		if diff := cmp.Diff(in, got, sampleCmp...); diff != "" {
			t.Errorf("keyframe every %v: samples (-want +got):\n%s", keyEvery, diff)
		}
	}
}
