package containers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/containers"
	"github.com/ctxtop/ctxtop/internal/containers/nodetest"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// A node with a pod of each driver and runtime, a Docker and a Podman
// container: every cgroup resolves to its names.
func TestResolveNode(t *testing.T) {
	root := t.TempDir()
	web, side, pause := nodetest.ID(1), nodetest.ID(2), nodetest.ID(3)
	uid := nodetest.UID(1)
	nodetest.AddPod(t, root, nodetest.Pod{Namespace: "shop", Name: "web-7d9f", UID: uid,
		Containers: map[string]string{"nginx": web, "envoy": side}})
	dock, pm := nodetest.ID(4), nodetest.ID(5)
	nodetest.AddDocker(t, root, dock, "redis", nil)
	kd := nodetest.ID(6)
	nodetest.AddDocker(t, root, kd, "k8s_app_api_prod_"+nodetest.UID(2)+"_0", map[string]string{
		"io.kubernetes.container.name": "app", "io.kubernetes.pod.name": "api", "io.kubernetes.pod.namespace": "prod"})
	nodetest.SetPodman(t, root, map[string]string{pm: "builder"})

	r := containers.New(root)
	ctr := func(rt, id, name, pod, ns, uid, qos string) *model.Container {
		return model.Seal(model.Container{Runtime: rt, ID: id, Name: name, Pod: pod, Namespace: ns, PodUID: uid, QoS: qos})
	}
	for _, tc := range []struct {
		path string
		want *model.Container
	}{
		{nodetest.SystemdPod("burstable", uid) + "/cri-containerd-" + web + ".scope", ctr("containerd", web, "nginx", "web-7d9f", "shop", uid, "burstable")},
		{nodetest.CgroupfsPod("burstable", uid) + "/" + side, ctr("", side, "envoy", "web-7d9f", "shop", uid, "burstable")},
		{nodetest.SystemdPod("burstable", uid) + "/cri-containerd-" + pause + ".scope", ctr("containerd", pause, "", "web-7d9f", "shop", uid, "burstable")},
		{nodetest.SystemdPod("burstable", uid), ctr("", "", "", "web-7d9f", "shop", uid, "burstable")},
		{"/system.slice/containerd.service/kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice:cri-containerd:" + web, ctr("containerd", web, "nginx", "web-7d9f", "shop", uid, "burstable")},
		{"/system.slice/docker-" + dock + ".scope", ctr("docker", dock, "redis", "", "", "", "")},
		{"/docker/" + dock, ctr("docker", dock, "redis", "", "", "", "")},
		// cri-dockerd: no log links here, the pod from Docker's labels
		{nodetest.CgroupfsPod("besteffort", nodetest.UID(2)) + "/" + kd, ctr("docker", kd, "app", "api", "prod", nodetest.UID(2), "besteffort")},
		{"/machine.slice/libpod-" + pm + ".scope/container", ctr("podman", pm, "builder", "", "", "", "")},
		{"/system.slice/nginx.service", nil},
	} {
		if diff := cmp.Diff(tc.want, r.Resolve(tc.path)); diff != "" {
			t.Errorf("Resolve(%q) (-want +got):\n%s", tc.path, diff)
		}
	}
}

// A pod whose cgroup appears before its log directory (the kubelet makes
// the cgroup first) is named once the directory appears, within the
// rescan period; and a named one is not looked up again.
func TestResolveRefresh(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "var/log/pods"), 0o755); err != nil {
		t.Fatal(err)
	}
	uid, id := nodetest.UID(7), nodetest.ID(7)
	path := nodetest.SystemdPod("besteffort", uid) + "/crio-" + id + ".scope"
	r := containers.New(root)
	if c := r.Resolve(path); c == nil || c.Name != "" || c.Pod != "" {
		t.Fatalf("before the pod's files: %+v, want unnamed", c)
	}
	nodetest.AddPod(t, root, nodetest.Pod{Namespace: "ns", Name: "late", UID: uid, Containers: map[string]string{"main": id}})
	deadline := time.Now().Add(3 * time.Second)
	var c *model.Container
	for time.Now().Before(deadline) {
		if c = r.Resolve(path); c.Name != "" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c.Name != "main" || c.Pod != "late" || c.Namespace != "ns" {
		t.Errorf("after the pod's files: %+v, want ns/late/main", c)
	}
	if again := r.Resolve(path); again != c {
		t.Errorf("a named cgroup resolved anew: %p then %p", c, again)
	}
}

// Names are untrusted: escape sequences are cleaned, long names cut, and
// names that do not follow the kubelet's layout ignored.
func TestResolveHostileNames(t *testing.T) {
	root := t.TempDir()
	uid, id := nodetest.UID(9), nodetest.ID(9)
	nodetest.AddPod(t, root, nodetest.Pod{Namespace: "ns\x1b[2J", Name: "p\u009b31m", UID: uid,
		Containers: map[string]string{"c\x07\u202e": id}})
	// Directories that are not the kubelet's: too many or too few '_'.
	for _, d := range []string{"a_b_c_" + nodetest.UID(10), "nounderscore", "a_" + nodetest.UID(11)} {
		if err := os.MkdirAll(filepath.Join(root, "var/log/pods", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	huge := strings.Repeat("\x1b[31mé", 10<<10/7)
	dock, pm := nodetest.ID(12), nodetest.ID(13)
	nodetest.AddDocker(t, root, dock, huge, nil)
	nodetest.SetPodman(t, root, map[string]string{pm: huge + "\xff"})
	r := containers.New(root)
	got := r.Resolve(nodetest.CgroupfsPod("guaranteed", uid) + "/" + id)
	if want := model.Seal(model.Container{ID: id, Name: "c??", Pod: "p?31m", Namespace: "ns?[2J", PodUID: uid, QoS: "guaranteed"}); !cmp.Equal(want, got) {
		t.Errorf("hostile pod (-want +got):\n%s", cmp.Diff(want, got))
	}
	for _, path := range []string{"/docker/" + dock, "/machine.slice/libpod-" + pm + ".scope"} {
		c := r.Resolve(path)
		if c == nil || c.Name == "" {
			t.Fatalf("%s: %+v, want a name", path, c)
		}
		if !sanitize.Clean(c.Name) || len(c.Name) > containers.MaxName {
			t.Errorf("%s: name of %d bytes, clean %v; want at most %d, clean", path, len(c.Name), sanitize.Clean(c.Name), containers.MaxName)
		}
	}
	if c := r.Resolve(nodetest.CgroupfsPod("burstable", nodetest.UID(10)) + "/" + nodetest.ID(10)); c.Pod != "" {
		t.Errorf("a directory with three '_' named a pod: %+v", c)
	}
}

// Thousands of pods: every one named while under the bound; past it, the
// resolver reads no more than the bound and still answers.
func TestResolveManyPods(t *testing.T) {
	root := t.TempDir()
	pods := filepath.Join(root, "var/log/pods")
	n := containers.MaxPods + 500
	for i := range n {
		if err := os.MkdirAll(filepath.Join(pods, fmt.Sprintf("ns%d_pod%d_%s", i%50, i, nodetest.UID(i))), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := containers.New(root)
	named := 0
	for i := range n {
		if c := r.Resolve(nodetest.SystemdPod("besteffort", nodetest.UID(i))); c.Pod != "" {
			named++
			if want := fmt.Sprintf("pod%d", i); c.Pod != want {
				t.Fatalf("pod %d named %q, want %q", i, c.Pod, want)
			}
		}
	}
	if named != containers.MaxPods {
		t.Errorf("%d of %d pods named, want the bound %d", named, n, containers.MaxPods)
	}
}
