// Package containers says what runs in a cgroup: the container runtime and
// container ID, the kubelet's pod UID and QoS class, all from the cgroup's
// path, and the names the node itself holds for them, read from files under
// a host root (never an API server, never a runtime's socket):
//
//	/var/log/pods/<namespace>_<pod>_<uid>/<container>/      kubelet's pod logs
//	/var/log/containers/<pod>_<namespace>_<container>-<id>.log
//	/var/lib/docker/containers/<id>/config.v2.json          Docker's name and labels
//	/var/lib/containers/storage/overlay-containers/containers.json   Podman's names
//
// Every name read is untrusted: anyone who can create a pod names its
// directories, anyone who can run a container names it. Each is cut to
// MaxName bytes and cleaned with sanitize.Name once, here, where it enters.
package containers

import (
	"strings"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Parse says what runs in the cgroup at path from its name alone: ok is
// false for a cgroup that is no container's and no pod's (a systemd unit,
// a user's session, the root). It knows the layouts the kubelet makes with
// its systemd and cgroupfs drivers, for every QoS class:
//
//	/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope
//	/kubepods.slice/kubepods-pod<uid>.slice/crio-<id>.scope                     guaranteed: no class level
//	/kubepods/besteffort/pod<uid>/<id>                                          cgroupfs driver
//	/system.slice/containerd.service/kubepods-burstable-pod<uid>.slice:cri-containerd:<id>   containerd's older form
//
// and the runtimes' own scopes outside a pod: docker-<id>.scope and
// /docker/<id>, libpod-<id>.scope and /libpod_parent/libpod-<id>,
// crio-<id>.scope, cri-containerd-<id>.scope, nerdctl-<id>.scope. A cgroup
// below a container's (a runtime's init sub-group, systemd in a container)
// is that container's; one below a pod's but beside its containers (CRI-O's
// conmon) is the pod's.
func Parse(path string) (c model.Container, ok bool) {
	path = strings.Trim(path, "/")
	if path == "" {
		return c, false
	}
	var elems [64]string
	n := 0
	for e := range strings.SplitSeq(path, "/") {
		if n == len(elems) {
			return c, false // deeper than any layout above: not one of them
		}
		elems[n] = e
		n++
	}
	es := elems[:n]
	inKube := false
	for i, e := range es {
		if strings.Contains(e, "kubepods") {
			inKube = true
		}
		if !inKube {
			continue
		}
		if uid, qos, rest, found := podElem(e, i, es); found {
			c.PodUID, c.QoS = uid, qos
			if rest != "" {
				// containerd's older form: slice:runtime:id in one element.
				c.Runtime, c.ID = rest[:strings.IndexByte(rest, ':')], rest[strings.IndexByte(rest, ':')+1:]
				return c, true
			}
			if i+1 < len(es) {
				c.Runtime, c.ID, _ = containerElem(es[i+1], es[i])
			}
			return c, true
		}
	}
	// Outside a pod: the outermost container element, so that a group
	// below one (podman's libpod-<id>.scope/container, an ID-named group a
	// container made) is that container's.
	for i, e := range es {
		parent := ""
		if i > 0 {
			parent = es[i-1]
		}
		if rt, id, found := containerElem(e, parent); found {
			c.Runtime, c.ID = rt, id
			return c, true
		}
	}
	return c, false
}

// podElem recognises a pod's cgroup element and returns its UID (with
// dashes), its QoS class and, for containerd's older "slice:runtime:id"
// form, "runtime:id".
func podElem(e string, i int, es []string) (uid, qos, rest string, ok bool) {
	qos = "guaranteed"
	if slice, tail, colon := strings.Cut(e, ":"); colon {
		rt, id, ok2 := strings.Cut(tail, ":")
		if !ok2 || !isHexID(id) {
			return "", "", "", false
		}
		switch rt {
		case "cri-containerd":
			rt = "containerd"
		case "crio", "docker":
		default:
			return "", "", "", false
		}
		uid, qos, _, ok = podElem(slice, i, es)
		return uid, qos, rt + ":" + id, ok
	}
	if base, isSlice := strings.CutSuffix(e, ".slice"); isSlice {
		// systemd driver: [prefix-]kubepods[-qos]-pod<uid_with_underscores>.slice
		k := strings.Index(base, "kubepods")
		if k < 0 {
			return "", "", "", false
		}
		base = base[k+len("kubepods"):]
		for _, q := range []string{"-burstable", "-besteffort"} {
			if r, found := strings.CutPrefix(base, q); found {
				qos, base = q[1:], r
			}
		}
		u, found := strings.CutPrefix(base, "-pod")
		if !found {
			return "", "", "", false
		}
		u = strings.ReplaceAll(u, "_", "-")
		if !isUID(u) {
			return "", "", "", false
		}
		return u, qos, "", true
	}
	// cgroupfs driver: .../kubepods[/qos]/pod<uid>
	u, found := strings.CutPrefix(e, "pod")
	if !found || !isUID(u) || i == 0 {
		return "", "", "", false
	}
	if p := es[i-1]; p == "burstable" || p == "besteffort" {
		qos = p
	}
	return u, qos, "", true
}

// runtimePrefixes are the scope prefixes the runtimes name a container's
// cgroup with (systemd driver), or with which their cgroupfs layout names it.
var runtimePrefixes = [...]struct{ prefix, runtime string }{
	{"cri-containerd-", "containerd"}, {"containerd-", "containerd"}, {"nerdctl-", "containerd"},
	{"crio-", "crio"}, {"docker-", "docker"}, {"libpod-", "podman"},
}

// containerElem recognises a container's cgroup element: a runtime's
// scope, or a bare ID (cgroupfs), whose runtime the parent may say.
func containerElem(e, parent string) (runtime, id string, ok bool) {
	e = strings.TrimSuffix(e, ".scope")
	for _, p := range runtimePrefixes {
		if rest, found := strings.CutPrefix(e, p.prefix); found && isHexID(rest) {
			return p.runtime, rest, true
		}
	}
	if !isHexID(e) {
		return "", "", false
	}
	switch parent {
	case "docker":
		return "docker", e, true
	case "libpod_parent":
		return "podman", e, true
	}
	return "", e, true
}

// isHexID says whether s is a container ID: 32 to 64 lower-case hex digits
// (the runtimes make 64).
func isHexID(s string) bool {
	if len(s) < 32 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isUID says whether s is a pod UID: a UUID, or the hex hash the kubelet
// gives a static pod (32 digits), lower case.
func isUID(s string) bool {
	if len(s) < 32 || len(s) > 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c == '-') {
			return false
		}
	}
	return true
}
