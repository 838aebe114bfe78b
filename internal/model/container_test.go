package model

import "testing"

func TestContainerTitle(t *testing.T) {
	const id = "3f1c2b4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"
	const uid = "1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a"
	for _, tc := range []struct {
		c    Container
		want string
	}{
		{Container{Runtime: "containerd", ID: id, Name: "nginx", Pod: "web", Namespace: "shop", PodUID: uid}, "shop/web/nginx"},
		{Container{Runtime: "containerd", ID: id, Pod: "web", Namespace: "shop", PodUID: uid}, "shop/web/3f1c2b4d5e6f"},
		{Container{Pod: "web", Namespace: "shop", PodUID: uid}, "shop/web"},
		{Container{ID: id, PodUID: uid, QoS: "burstable"}, "pod 1d2e3f4a/3f1c2b4d5e6f"},
		{Container{Runtime: "docker", ID: id, Name: "redis"}, "redis"},
		{Container{Runtime: "podman", ID: id}, "podman 3f1c2b4d5e6f"},
		{Container{ID: id}, "container 3f1c2b4d5e6f"},
	} {
		if got := Seal(tc.c).Title; got != tc.want {
			t.Errorf("Seal(%+v).Title = %q, want %q", tc.c, got, tc.want)
		}
	}
	var none *Container
	if none.Label() != "" || none.PodLabel() != "" {
		t.Errorf("nil container has labels %q %q", none.Label(), none.PodLabel())
	}
}
