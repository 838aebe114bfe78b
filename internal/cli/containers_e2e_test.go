package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/containers/nodetest"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

type ctrJSON struct {
	Runtime, ID, Name, Pod, Namespace string
}

func (c *ctrJSON) title() string {
	switch {
	case c == nil:
		return ""
	case c.Pod != "":
		return c.Namespace + "/" + c.Pod + "/" + c.Name
	}
	return c.Name
}

type reportJSON struct {
	Processes []struct {
		PID       int      `json:"pid"`
		Container *ctrJSON `json:"container"`
	} `json:"processes"`
	Threads []struct {
		PID       int      `json:"pid"`
		Container *ctrJSON `json:"container"`
	} `json:"threads"`
	Cgroups []struct {
		Cgroup    string   `json:"cgroup"`
		Name      string   `json:"name"`
		Container *ctrJSON `json:"container"`
	} `json:"cgroups"`
}

// titles reads JSON reports and returns, from the last, each process's
// container title and each thread's, which must agree.
func titles(t *testing.T, out []byte) map[int]string {
	t.Helper()
	var last reportJSON
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		last = reportJSON{} // a fresh one: Unmarshal would fill the old rows' containers in
		if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
			t.Fatalf("report %d: %v", n, err)
		}
		n++
	}
	if n == 0 {
		t.Fatalf("no report:\n%s", out)
	}
	got := map[int]string{}
	for _, p := range last.Processes {
		got[p.PID] = p.Container.title()
	}
	for _, th := range last.Threads {
		if g, ok := got[th.PID]; ok && g != th.Container.title() {
			t.Errorf("PID %d: process in %q, thread in %q", th.PID, g, th.Container.title())
		}
	}
	for _, c := range last.Cgroups {
		if c.Container != nil && c.Name != c.Container.title() {
			t.Errorf("cgroup %s named %q, its container %q", c.Cgroup, c.Name, c.Container.title())
		}
	}
	return got
}

func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ",")
}

// A node's pods (both kubelet drivers, every QoS class), a Docker and a
// Podman container, in real cgroups with real processes: batch JSON, a
// recording's replay on a machine without the node's files, and a scrape
// all name every one.
func TestContainersNamedEverywhere(t *testing.T) {
	bin := testutil.Binary(t)
	cg := nodetest.NewCgroups(t)
	node := nodetest.NewNode(t, cg, nodetest.HostRoot(t))
	pids := pidList(node.PIDs)

	out, err := exec.Command(bin, "-b", "-o", "json", "--host-root", node.Root, "-p", pids, "-d", "0.3", "-n", "2").Output()
	if err != nil {
		t.Fatalf("json: %v\n%s", err, exitStderr(err))
	}
	if diff := cmp.Diff(node.Titles, titles(t, out)); diff != "" {
		t.Errorf("batch JSON: containers by PID (-want +got):\n%s", diff)
	}

	// Recorded on the node, replayed where its files are not.
	rec := filepath.Join(t.TempDir(), "node.ctxrec")
	if out, err := exec.Command(bin, "record", "-o", rec, "--host-root", node.Root, "-p", pids, "-d", "0.3", "--duration", "1.2").CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "replay", rec, "-o", "json").Output()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, exitStderr(err))
	}
	if diff := cmp.Diff(node.Titles, titles(t, out)); diff != "" {
		t.Errorf("replay: containers by PID (-want +got):\n%s", diff)
	}

	// The scrape: one series set per container, labelled as cAdvisor's.
	url := "http://" + testutil.StartServe(t, "--web.listen-address=127.0.0.1:0", "--host-root", node.Root, "-p", pids) + "/metrics"
	var body string
	for range 2 {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		time.Sleep(300 * time.Millisecond)
	}
	for _, title := range node.Titles {
		var want string
		if parts := strings.Split(title, "/"); len(parts) == 3 {
			want = fmt.Sprintf(`ctxtop_container_threads{container=%q,namespace=%q,pod=%q} `, parts[2], parts[0], parts[1])
		} else {
			want = fmt.Sprintf(`ctxtop_container_threads{container=%q,namespace="",pod=""} `, title)
		}
		i := strings.Index(body, want)
		if i < 0 {
			t.Errorf("scrape lacks %s", want)
			continue
		}
		line, _, _ := strings.Cut(body[i+len(want):], "\n")
		if n, err := strconv.Atoi(line); err != nil || n < 1 {
			t.Errorf("%s%s: want a thread count of 1 or more", want, line)
		}
	}
}

// As the DaemonSet runs it: ctxtop in new PID, mount and cgroup
// namespaces (its cgroup namespace rooted at a group of its own), with the
// host's /proc and /sys bind-mounted under its --host-root. It shows the
// same cgroup paths and names as on the host.
func TestContainersFromOwnNamespaces(t *testing.T) {
	bin := testutil.Binary(t)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	cg := nodetest.NewCgroups(t)
	root := t.TempDir()
	for _, d := range []string{"proc", "sys"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	node := nodetest.NewNode(t, cg, root)
	pids := pidList(node.PIDs)
	// The agent's own group, as a container's: its cgroup namespace's root.
	agent := fmt.Sprintf("/ctxtop-agent-%d", os.Getpid())
	if err := os.Mkdir(filepath.Join(cg.Mount, agent), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 100 {
			if os.Remove(filepath.Join(cg.Mount, agent)) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	script := fmt.Sprintf(`echo $$ > %s/cgroup.procs && exec unshare --pid --mount --cgroup --fork sh -c '
		mount --bind /proc %[2]s/proc && mount --bind /sys %[2]s/sys &&
		cat /proc/self/cgroup >&2 &&
		exec %[3]s -b -o json --host-root %[2]s -p %[4]s -d 0.3 -n 2'`,
		filepath.Join(cg.Mount, agent), root, bin, pids)
	cmd := exec.Command("sh", "-c", script)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("in namespaces: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), ":/\n") {
		t.Fatalf("not in a cgroup namespace of its own; /proc/self/cgroup:\n%s", stderr.String())
	}
	if diff := cmp.Diff(node.Titles, titles(t, out)); diff != "" {
		t.Errorf("from namespaces: containers by PID (-want +got):\n%s", diff)
	}
	host, err := exec.Command(bin, "-b", "-o", "json", "--host-root", root, "--proc", "/proc", "--cgroup-root", filepath.Dir(cg.Mount), "-p", pids, "-d", "0.3", "-n", "1").Output()
	if err != nil {
		t.Fatalf("host: %v\n%s", err, exitStderr(err))
	}
	if diff := cmp.Diff(cgroupPaths(t, host), cgroupPaths(t, out)); diff != "" {
		t.Errorf("cgroup paths, host (-) and in namespaces (+):\n%s", diff)
	}
}

// cgroupPaths are the last report's cgroup paths with their names.
func cgroupPaths(t *testing.T, out []byte) map[string]string {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var r reportJSON
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, c := range r.Cgroups {
		m[c.Cgroup] = c.Name
	}
	return m
}
