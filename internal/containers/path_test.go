package containers

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

const (
	id1  = "3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"
	uid1 = "1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a"
	uidU = "1d2e3f4a_5b6c_7d8e_9f0a_1b2c3d4e5f6a"
)

// The cgroup names below are the ones the kubelet (both drivers, every
// QoS class) and the runtimes make.
func TestParse(t *testing.T) {
	pod := func(qos, rt string) model.Container {
		return model.Container{PodUID: uid1, QoS: qos, Runtime: rt, ID: id1}
	}
	for _, tc := range []struct {
		path string
		want model.Container
		ok   bool
	}{
		// kubelet, systemd driver
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/cri-containerd-" + id1 + ".scope", pod("burstable", "containerd"), true},
		{"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidU + ".slice/crio-" + id1 + ".scope", pod("besteffort", "crio"), true},
		{"/kubepods.slice/kubepods-pod" + uidU + ".slice/docker-" + id1 + ".scope", pod("guaranteed", "docker"), true},
		// kind and nested nodes put kubepods below another slice
		{"/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" + uidU + ".slice/cri-containerd-" + id1 + ".scope", pod("besteffort", "containerd"), true},
		// kubelet, cgroupfs driver
		{"/kubepods/burstable/pod" + uid1 + "/" + id1, pod("burstable", ""), true},
		{"/kubepods/besteffort/pod" + uid1 + "/crio-" + id1, pod("besteffort", "crio"), true},
		{"/kubepods/pod" + uid1 + "/" + id1, pod("guaranteed", ""), true},
		// containerd's older form
		{"/system.slice/containerd.service/kubepods-burstable-pod" + uidU + ".slice:cri-containerd:" + id1, pod("burstable", "containerd"), true},
		{"/system.slice/crio.service/kubepods-pod" + uidU + ".slice:crio:" + id1, pod("guaranteed", "crio"), true},
		// the pod's own cgroup, and CRI-O's conmon beside its containers
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice", model.Container{PodUID: uid1, QoS: "burstable"}, true},
		{"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/crio-conmon-" + id1 + ".scope", model.Container{PodUID: uid1, QoS: "burstable"}, true},
		// a group below a container's is the container's
		{"/kubepods/burstable/pod" + uid1 + "/" + id1 + "/init", pod("burstable", ""), true},
		// runtimes outside a pod
		{"/system.slice/docker-" + id1 + ".scope", model.Container{Runtime: "docker", ID: id1}, true},
		{"/docker/" + id1, model.Container{Runtime: "docker", ID: id1}, true},
		{"/machine.slice/libpod-" + id1 + ".scope", model.Container{Runtime: "podman", ID: id1}, true},
		{"/machine.slice/libpod-" + id1 + ".scope/container", model.Container{Runtime: "podman", ID: id1}, true},
		{"/libpod_parent/libpod-" + id1, model.Container{Runtime: "podman", ID: id1}, true},
		{"/libpod_parent/" + id1, model.Container{Runtime: "podman", ID: id1}, true},
		{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + id1 + ".scope", model.Container{Runtime: "podman", ID: id1}, true},
		{"/system.slice/nerdctl-" + id1 + ".scope", model.Container{Runtime: "containerd", ID: id1}, true},
		{"/default/" + id1, model.Container{ID: id1}, true},
		// not containers
		{"/", model.Container{}, false},
		{"", model.Container{}, false},
		{"/system.slice/nginx.service", model.Container{}, false},
		{"/machine.slice/libpod-conmon-" + id1 + ".scope", model.Container{}, false},
		{"/user.slice/user-1000.slice/session-3.scope", model.Container{}, false},
		{"/kubepods.slice/kubepods-burstable.slice", model.Container{}, false},
		{"/kubepods/burstable/podnotauid/" + id1, model.Container{Runtime: "", ID: id1}, true},
		{"/docker/" + strings.ToUpper(id1), model.Container{}, false},
		{"/" + strings.Repeat("a/", 100) + id1, model.Container{}, false},
	} {
		got, ok := Parse(tc.path)
		if ok != tc.ok {
			t.Errorf("Parse(%q) ok = %v, want %v", tc.path, ok, tc.ok)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tc.path, diff)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/cri-containerd-" + id1 + ".scope")
	f.Add("/system.slice/containerd.service/kubepods-burstable-pod" + uidU + ".slice:cri-containerd:" + id1)
	f.Add("/kubepods/pod" + uid1 + "/" + id1)
	f.Add("/x.slice::")
	f.Fuzz(func(t *testing.T, p string) {
		c, ok := Parse(p)
		if !ok && c != (model.Container{}) {
			t.Errorf("Parse(%q) = %+v, not ok", p, c)
		}
		if c.ID != "" && !isHexID(c.ID) || c.PodUID != "" && !isUID(c.PodUID) {
			t.Errorf("Parse(%q) = %+v: an ID that is not one", p, c)
		}
	})
}
