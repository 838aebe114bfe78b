package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

func TestFoldedPerThreadAndPerProcess(t *testing.T) {
	s := &model.Snapshot{Stacks: &model.Stacks{Folded: []model.FoldedStack{
		{Frames: []string{"pool-1", "[off-cpu]", "main", "take;it", "__schedule"}, Count: 3, Process: "java"},
		{Frames: []string{"pool-2", "[off-cpu]", "main", "take;it", "__schedule"}, Count: 4, Process: "java"},
		{Frames: []string{"4242", "[woken by x]", "try_to_wake_up"}, Count: 1},
	}}}
	for _, c := range []struct {
		processes bool
		want      string
	}{
		{false, "4242;[woken by x];try_to_wake_up 1\n" +
			"pool-1;[off-cpu];main;take:it;__schedule 3\n" +
			"pool-2;[off-cpu];main;take:it;__schedule 4\n"},
		// One flame per process: the threads' alike stacks summed; a
		// thread without a row keeps its name.
		{true, "4242;[woken by x];try_to_wake_up 1\n" +
			"java;[off-cpu];main;take:it;__schedule 7\n"},
	} {
		var b bytes.Buffer
		if err := NewFolded(&b, c.processes).Write(s); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, b.String()); diff != "" {
			t.Errorf("processes %v (-want +got)\n%s", c.processes, diff)
		}
	}
}

// Empty says why nothing was folded, and nothing once a stack was.
func TestFoldedEmptySaysWhy(t *testing.T) {
	var b strings.Builder
	f := NewFolded(&b, false)
	if got := f.Empty(1000); !strings.Contains(got, "no thread blocked at 1000 switches/s") {
		t.Errorf("no reports: %q", got)
	}
	_ = f.Write(&model.Snapshot{Stacks: &model.Stacks{Unavailable: "needs root"}})
	if got, want := f.Empty(1000), "no stacks to fold: needs root"; got != want {
		t.Errorf("tracer unavailable: %q, want %q", got, want)
	}
	_ = f.Write(&model.Snapshot{Stacks: &model.Stacks{Targets: []int{7}}})
	if got := f.Empty(1000); !strings.Contains(got, "did not block") {
		t.Errorf("targets without stacks: %q", got)
	}
	_ = f.Write(&model.Snapshot{Stacks: &model.Stacks{Targets: []int{7}, Folded: []model.FoldedStack{{Frames: []string{"t", "[off-cpu]", "f"}, Count: 1}}}})
	if got := f.Empty(1000); got != "" {
		t.Errorf("after a stack: %q, want empty", got)
	}
}
