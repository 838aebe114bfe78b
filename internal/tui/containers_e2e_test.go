package tui_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/containers/nodetest"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// On a node the live monitor names each hot thread's container and pod,
// the filter finds a pod's rows by its name, and the cgroup view is the
// tree namespace → pod → container, folded with ← and →.
func TestContainersInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	bin := testutil.Binary(t)
	cg := nodetest.NewCgroups(t)
	node := nodetest.NewNode(t, cg, nodetest.HostRoot(t))
	pids := make([]string, len(node.PIDs))
	for i, p := range node.PIDs {
		pids[i] = strconv.Itoa(p)
	}
	x := startTmux(t, "containers", 160, 40, "sh")
	x.run("send-keys", "-t", "e2e", "clear; "+bin+" --host-root "+node.Root+" -p "+strings.Join(pids, ",")+" -d 0.5; echo EXITED $?", "Enter")

	// The POD column is 26 cells: longer names end in "…".
	p := x.waitFor("the container and pod columns", contains("CONTAINER", "POD", "nginx", "envoy", "redis", "builder",
		"ns-burstable/web-burstable", "ns-guaranteed/web-guarant…", "ns-besteffort/web-besteff…"))
	checkFits(t, p, 160, 40)

	x.run("send-keys", "-t", "e2e", "/", "web-burstable", "Enter")
	// Every row the pod's: its two containers' threads, and nothing else.
	p = x.waitFor("the filter by pod name", func(p string) bool {
		rows := tableRows(p)
		for _, r := range rows {
			if !strings.Contains(r, "ns-burstable/web-burstable") || !(strings.Contains(r, "nginx") || strings.Contains(r, "envoy")) {
				return false
			}
		}
		return len(rows) >= 2
	})
	checkFits(t, p, 160, 40)
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the filter to clear", contains("redis", "builder"))

	x.run("send-keys", "-t", "e2e", "H", "H")
	// The tree: each namespace above its pod, the pod above its two
	// containers (one per kubelet driver); Docker's and Podman's
	// containers at the top level, unmarked.
	p = x.waitFor("the cgroup view's tree", contains("CGROUP", "▾ ns-burstable", "└▾ web-burstable", "▾ ns-guaranteed", "└▾ web-guaranteed",
		"▾ ns-besteffort", "└▾ web-besteffort", "  ├ nginx", "  └ nginx", "  ├ envoy", "  └ envoy", "redis", "builder"))
	checkFits(t, p, 160, 40)
	for _, r := range tableRows(p) {
		if (strings.Contains(r, "redis") || strings.Contains(r, "builder")) && strings.ContainsAny(r, "▾▸├└") {
			t.Errorf("a container outside any pod is in the tree: %q", r)
		}
	}
	x.run("send-keys", "-t", "e2e", "/", "web-burstable", "Enter")
	x.waitFor("the pod's branch alone", func(p string) bool {
		rows := tableRows(p)
		return len(rows) == 4 && strings.Contains(rows[0], "▾ ns-burstable")
	})
	// ← on the selected namespace folds it away, → opens it again.
	x.run("send-keys", "-t", "e2e", "Left")
	x.waitFor("the namespace folded", func(p string) bool {
		rows := tableRows(p)
		return len(rows) == 1 && strings.Contains(rows[0], "▸ ns-burstable")
	})
	x.run("send-keys", "-t", "e2e", "Right")
	x.waitFor("the namespace unfolded", func(p string) bool {
		return len(tableRows(p)) == 4 && strings.Contains(p, "nginx") && strings.Contains(p, "envoy")
	})
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the filter to clear", contains("redis", "builder"))

	x.run("send-keys", "-t", "e2e", "q")
	x.waitFor("ctxtop to exit", contains("EXITED 0"))
}
