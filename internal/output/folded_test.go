package output

import (
	"bytes"
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
