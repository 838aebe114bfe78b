// Package nodetest makes what a Kubernetes or container node holds, for
// tests: the kubelet's and the runtimes' files under a temporary root, and
// real cgroups named exactly as the kubelet and the runtimes name them,
// with real processes moved into them.
package nodetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// Pod is one pod of a fake node.
type Pod struct {
	Namespace, Name, UID string
	// Containers maps a container's name to its ID.
	Containers map[string]string
}

// AddPod writes what the kubelet writes for a pod: its log directory
// under var/log/pods with one directory per container, and one
// var/log/containers link per container.
func AddPod(t testing.TB, root string, p Pod) {
	t.Helper()
	dir := filepath.Join(root, "var/log/pods", p.Namespace+"_"+p.Name+"_"+p.UID)
	mkdir(t, filepath.Join(root, "var/log/containers"))
	for name, id := range p.Containers {
		mkdir(t, filepath.Join(dir, name))
		log := filepath.Join(dir, name, "0.log")
		if err := os.WriteFile(log, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(root, "var/log/containers", p.Name+"_"+p.Namespace+"_"+name+"-"+id+".log")
		if err := os.Symlink(log, link); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(t, dir)
}

// AddDocker writes Docker's config.v2.json for a container.
func AddDocker(t testing.TB, root, id, name string, labels map[string]string) {
	t.Helper()
	dir := filepath.Join(root, "var/lib/docker/containers", id)
	mkdir(t, dir)
	b, err := json.Marshal(map[string]any{"ID": id, "Name": "/" + name, "Config": map[string]any{"Labels": labels, "Env": []string{"PATH=/bin"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.v2.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// SetPodman writes containers/storage's list of containers, ID to name.
func SetPodman(t testing.TB, root string, names map[string]string) {
	t.Helper()
	dir := filepath.Join(root, "var/lib/containers/storage/overlay-containers")
	mkdir(t, dir)
	type ctr struct {
		ID    string   `json:"id"`
		Names []string `json:"names"`
		Image string   `json:"image"`
	}
	var list []ctr
	for id, n := range names {
		list = append(list, ctr{id, []string{n}, "0123"})
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, ".containers.json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "containers.json")); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// ID makes a 64-digit container ID from a seed.
func ID(seed int) string { return fmt.Sprintf("%064x", 0xc0ffee00+seed) }

// UID makes a pod UID from a seed.
func UID(seed int) string {
	return fmt.Sprintf("%08x-5b6c-4d8e-9f0a-%012x", 0x1d2e0000+seed, seed)
}

// Cgroups are the cgroups one test made, in the hierarchy ctxtop groups
// processes by (the v1 cpu controller's, else the unified one).
type Cgroups struct {
	// Mount is where the hierarchy is mounted.
	Mount string
	made  []string
	cmds  map[int]*exec.Cmd
}

// NewCgroups finds the hierarchy, or skips the test: creating cgroups
// needs root and a cgroup file system mounted at its root.
func NewCgroups(t testing.TB) *Cgroups {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root; skipped")
	}
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	m, err := fs.CgroupMounts()
	if err != nil {
		t.Skip("cannot read mountinfo:", err)
	}
	cg := &Cgroups{cmds: map[int]*exec.Cmd{}}
	switch {
	case m.CPU != "" && m.CPURoot == "/":
		cg.Mount = m.CPU
	case m.V2 != "" && m.V2Root == "/":
		cg.Mount = m.V2
	default:
		t.Skip("no cgroup hierarchy mounted at its root; skipped")
	}
	t.Cleanup(cg.remove)
	return cg
}

// Run makes the cgroup at path (with its parents) and starts a process in
// it: Ticker, which wakes every 10 ms, so it switches, and forks nothing.
// It returns the PID; the process is killed and the cgroups removed when
// the test ends.
func (c *Cgroups) Run(t testing.TB, path string) int {
	t.Helper()
	dir := filepath.Join(c.Mount, path)
	rel := strings.Trim(path, "/")
	acc := c.Mount
	for _, e := range strings.Split(rel, "/") {
		acc = filepath.Join(acc, e)
		if _, err := os.Stat(acc); err == nil {
			continue
		}
		if err := os.Mkdir(acc, 0o755); err != nil {
			t.Fatalf("making cgroup %s: %v", acc, err)
		}
		c.made = append(c.made, acc)
	}
	cmd := exec.Command(Ticker(t))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.cmds[cmd.Process.Pid] = cmd
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
		t.Fatalf("moving %d into %s: %v", cmd.Process.Pid, dir, err)
	}
	return cmd.Process.Pid
}

// Ticker is the path of the ticker program (package ticker), built once.
func Ticker(t testing.TB) string {
	return testutil.Tool(t, "./internal/containers/nodetest/ticker")
}

// Move moves a running process into the cgroup at path, made already.
func (c *Cgroups) Move(t testing.TB, path string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(c.Mount, path, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		t.Fatalf("moving %d into %s: %v", pid, path, err)
	}
}

func (c *Cgroups) remove() {
	// Children first; the processes' own cleanups ran before (registered
	// later), but their exit may lag a moment.
	for i := len(c.made) - 1; i >= 0; i-- {
		for range 100 {
			if err := os.Remove(c.made[i]); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// Kubelet cgroup paths, as the kubelet names them with each driver.
// qos is "guaranteed", "burstable" or "besteffort".

// SystemdPod is the pod's slice with the systemd driver.
func SystemdPod(qos, uid string) string {
	u := strings.ReplaceAll(uid, "-", "_")
	if qos == "guaranteed" {
		return "/kubepods.slice/kubepods-pod" + u + ".slice"
	}
	return "/kubepods.slice/kubepods-" + qos + ".slice/kubepods-" + qos + "-pod" + u + ".slice"
}

// CgroupfsPod is the pod's directory with the cgroupfs driver.
func CgroupfsPod(qos, uid string) string {
	if qos == "guaranteed" {
		return "/kubepods/pod" + uid
	}
	return "/kubepods/" + qos + "/pod" + uid
}

// Kill kills every process in the cgroup at path and waits until it is
// empty, as a container's end does.
func (c *Cgroups) Kill(t testing.TB, path string) {
	t.Helper()
	procs := filepath.Join(c.Mount, path, "cgroup.procs")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(procs)
		if err != nil {
			t.Fatal(err)
		}
		pids := strings.Fields(string(b))
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			pid, err := strconv.Atoi(p)
			if err != nil {
				continue
			}
			if cmd := c.cmds[pid]; cmd != nil {
				// Ours: reaped here, so no zombie stays in /proc.
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			} else if proc, err := os.FindProcess(pid); err == nil {
				_ = proc.Kill()
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("cgroup %s still has processes", path)
}

// HostRoot makes a directory laid out as a node agent's --host-root: the
// host's /proc and /sys linked in, the node's files (AddPod, AddDocker,
// SetPodman) to be written under it.
func HostRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"proc", "sys"} {
		if err := os.Symlink("/"+d, filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Node is a node with a pod of each kubelet driver and QoS class, a
// Docker and a Podman container, each running a ticker in a real cgroup.
type Node struct {
	Root string
	// Titles maps each ticker's PID to the title its container must have.
	Titles map[int]string
	PIDs   []int
}

// NewNode makes a Node under root.
func NewNode(t testing.TB, cg *Cgroups, root string) *Node {
	t.Helper()
	n := &Node{Root: root, Titles: map[int]string{}}
	seed := os.Getpid()%100000*10 + 7
	add := func(path, title string) {
		pid := cg.Run(t, path)
		n.Titles[pid] = title
		n.PIDs = append(n.PIDs, pid)
	}
	for i, qos := range []string{"guaranteed", "burstable", "besteffort"} {
		uid, id1, id2 := UID(seed+i), ID(seed+2*i), ID(seed+2*i+1)
		ns, pod := "ns-"+qos, "web-"+qos
		AddPod(t, root, Pod{Namespace: ns, Name: pod, UID: uid, Containers: map[string]string{"nginx": id1, "envoy": id2}})
		add(SystemdPod(qos, uid)+"/cri-containerd-"+id1+".scope", ns+"/"+pod+"/nginx")
		add(CgroupfsPod(qos, uid)+"/"+id2, ns+"/"+pod+"/envoy")
	}
	dock, pm := ID(seed+20), ID(seed+21)
	AddDocker(t, root, dock, "redis", nil)
	SetPodman(t, root, map[string]string{pm: "builder"})
	add("/system.slice/docker-"+dock+".scope", "redis")
	add("/machine.slice/libpod-"+pm+".scope", "builder")
	return n
}
