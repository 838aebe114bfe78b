package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/containers/nodetest"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// A real container engine: Podman runs the static ticker from a local
// root file system (no image, no network), and ctxtop names its threads
// after the container, from Podman's own store.
func TestPodmanContainerNamed(t *testing.T) {
	bin := testutil.Binary(t)
	podman, err := exec.LookPath("podman")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("podman not installed (.ci/run installs it)")
		}
		t.Skip("podman not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("runs a rootful container; skipped")
	}
	rootfs := t.TempDir()
	b, err := os.ReadFile(nodetest.Ticker(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "ticker"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("ctxtop-e2e-%d", os.Getpid())
	t.Cleanup(func() { _ = exec.Command(podman, "rm", "-f", "-t", "0", name).Run() })
	run := func(global ...string) (string, error) {
		// Limits within the test's own, which crun may not raise.
		args := append(global, "run", "-d", "--network", "none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
			"--name", name, "--rootfs", rootfs, "/ticker")
		var stderr bytes.Buffer
		cmd := exec.Command(podman, args...)
		cmd.Stderr = &stderr
		err := cmd.Run()
		return strings.TrimSpace(stderr.String()), err
	}
	if msg, err := run(); err != nil {
		// Seen here: crun refuses a hybrid cgroup host whose unified
		// hierarchy has a controller enabled ("cgroups in hybrid mode not
		// supported"), and a host without systemd has no systemd cgroup
		// manager; runc with podman's own cgroupfs manager runs there,
		// making /libpod_parent/libpod-<id>.
		_ = exec.Command(podman, "rm", "-f", "-t", "0", name).Run()
		if _, lerr := exec.LookPath("runc"); lerr != nil {
			t.Skipf("podman cannot run a container on this host (%v: %s) and runc, which might, is not installed", err, msg)
		}
		if msg2, err2 := run("--cgroup-manager=cgroupfs", "--runtime", "runc"); err2 != nil {
			t.Skipf("podman cannot run a container on this host: %v: %s; with runc and the cgroupfs manager: %v: %s", err, msg, err2, msg2)
		}
	}
	out, err := exec.Command(podman, "inspect", "-f", "{{.State.Pid}}", name).Output()
	if err != nil {
		t.Fatalf("podman inspect: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || pid <= 0 {
		t.Fatalf("podman inspect says PID %q", out)
	}
	out, err = exec.Command(bin, "-b", "-o", "json", "-p", strconv.Itoa(pid), "-d", "0.3", "-n", "2").Output()
	if err != nil {
		t.Fatalf("ctxtop: %v\n%s", err, exitStderr(err))
	}
	got := titles(t, out)
	if got[pid] != name {
		t.Errorf("the container's process %d is in %q, want %q:\n%s", pid, got[pid], name, out)
	}
}
