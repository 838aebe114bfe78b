package record

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/containers"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

const ctrID = "3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"

var recordedCtr = model.Seal(model.Container{Runtime: "containerd", ID: ctrID, Name: "nginx", Pod: "web-7d9f",
	Namespace: "shop", PodUID: "1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a", QoS: "burstable"})

// A recording keeps what ran in each cgroup, so a replay elsewhere names
// the node's pods; a container that changed or went is written again.
func TestRoundTripKeepsContainers(t *testing.T) {
	in := recordtest.Run(4, 2, 4, false)
	const pod, dock = "/kubepods/burstable/pod1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a/" + ctrID, "/docker/" + ctrID
	renamed := model.Seal(model.Container{Runtime: "docker", ID: ctrID, Name: "redis"})
	for i := range in {
		in[i].Cgroups = []model.CgroupCounters{{Path: dock, Container: renamed}, {Path: pod, Container: recordedCtr}}
	}
	in[2].Cgroups[0].Container = nil // resolved to nothing since
	in[3].Cgroups[0].Container = model.Seal(model.Container{Runtime: "docker", ID: ctrID})
	for _, keyEvery := range []time.Duration{0, time.Nanosecond} {
		_, got := decoded(t, record(t, in, WriterOptions{KeyframeEvery: keyEvery}))
		for i := range in {
			if diff := cmp.Diff(in[i].Cgroups, got[i].Cgroups); diff != "" {
				t.Errorf("keyframe every %v, sample %d: cgroups (-want +got):\n%s", keyEvery, i, diff)
			}
		}
	}
}

// An unchanged container costs nothing after the frame that named it.
func TestContainersCostNothingWhenUnchanged(t *testing.T) {
	in := recordtest.Run(3, 2, 3, false)
	for i := range in {
		in[i].Cgroups = []model.CgroupCounters{{Path: "/p", Container: model.Seal(*recordedCtr)}}
	}
	var e encoder
	var counts []int
	for i := range in {
		b, err := e.appendFrame(nil, &in[i], int64(i)*int64(time.Second), i == 0)
		if err != nil {
			t.Fatal(err)
		}
		counts = append(counts, bytes.Count(b, []byte("web-7d9f")))
	}
	if diff := cmp.Diff([]int{1, 0, 0}, counts); diff != "" {
		t.Errorf("pod names written per frame (-want +got):\n%s", diff)
	}
}

// Names in a file are untrusted: cleaned and cut as the live resolver
// cuts them.
func TestContainersFromAFileAreSanitizedAndBounded(t *testing.T) {
	in := recordtest.Run(2, 1, 2, false)
	long := strings.Repeat("\x1b[2Jé", 10<<10/6)
	for i := range in {
		in[i].Cgroups = []model.CgroupCounters{{Path: "/x", Container: &model.Container{ID: "id\x07", Name: long, Pod: "p\u202e", Namespace: long}}}
	}
	_, got := decoded(t, record(t, in, WriterOptions{}))
	c := got[1].Cgroups[0].Container
	if c == nil {
		t.Fatal("container lost")
	}
	for _, s := range []string{c.ID, c.Name, c.Pod, c.Namespace, c.Title} {
		if !sanitize.Clean(s) || len(s) > 3*containers.MaxName {
			t.Errorf("read back %d bytes %q: want clean, at most %d", len(s), s[:min(len(s), 40)], 3*containers.MaxName)
		}
	}
	if c.ID != "id?" || c.Pod != "p?" {
		t.Errorf("read back ID %q, pod %q; want id?, p?", c.ID, c.Pod)
	}
}
