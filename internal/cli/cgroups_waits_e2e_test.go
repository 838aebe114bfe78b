package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// The fixture tree with and without a cgroup root: cgroup rows print,
// nothing fails; a --cgroup-root that is not a directory is one line.
func TestCgroupsOnFixtureTree(t *testing.T) {
	bin := testutil.Binary(t)
	root := filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	cgroot := filepath.Join(testutil.RepoRoot(), "testdata", "cgroup")
	for _, args := range [][]string{
		{"--cgroups", "--cgroup-root", cgroot},
		{"--cgroups"}, // no cgroup mount for this tree: names only
	} {
		cmd := exec.Command(bin, append([]string{"-b", "--proc", root, "-d", "0.1", "-n", "2"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, exitStderr(err))
		}
		if strings.Count(string(out), "THRTL%") != 2 {
			t.Errorf("%v: want two cgroup reports:\n%s", args, out)
		}
	}
	out, err := exec.Command(bin, "-b", "-o", "json", "--proc", root, "--cgroup-root", cgroot, "-d", "0.1", "-n", "1").Output()
	if err != nil {
		t.Fatalf("json: %v\n%s", err, exitStderr(err))
	}
	var r map[string]any
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if c, ok := r["cgroups"].([]any); !ok || len(c) != 0 {
		t.Errorf("static tree: cgroups = %v, want []", r["cgroups"])
	}
	cmd := exec.Command(bin, "-b", "--proc", root, "--cgroup-root", filepath.Join(root, "stat"), "-n", "1")
	stderr, err := cmd.CombinedOutput()
	if err == nil || strings.Count(strings.TrimSpace(string(stderr)), "\n") != 0 || !strings.Contains(string(stderr), "--cgroup-root") {
		t.Errorf("--cgroup-root on a file: err %v, output %q; want exit 1 and one line", err, stderr)
	}
}

// TestThrottledAndFutexEndToEnd is the case the feature is for: a
// CPU-bound workload in a cgroup with a quota of 5% of a CPU (throttled even
// on a busy machine), and a futex ping-pong. One JSON report must say "throttled" for the
// first and "futex" for the second.
func TestThrottledAndFutexEndToEnd(t *testing.T) {
	bin := testutil.Binary(t)
	name, dir := v1CPUCgroup(t, "")
	var spinners []*exec.Cmd
	t.Cleanup(func() {
		for _, c := range spinners {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
		for range 50 {
			if os.Remove(dir) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("could not remove %s", dir)
	})
	if err := os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte("5000"), 0); err != nil {
		t.Fatal(err)
	}
	// The greatest weight: on a busy machine the spinners still use up
	// their quota.
	_ = os.WriteFile(filepath.Join(dir, "cpu.shares"), []byte("262144"), 0)
	for range 4 {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		spinners = append(spinners, c)
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(c.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	load := exec.Command(bin, "load", "--mode", "futex", "--duration", "20s")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = load.Process.Kill(); _ = load.Wait() })
	// Sampled once its threads run: on a loaded machine the workload
	// process can take seconds to start.
	for deadline := time.Now().Add(30 * time.Second); !threadNamed("pong-futex"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no pong-futex thread 30 s after ctxtop load started")
		}
	}

	out, err := exec.Command(bin, "-b", "-o", "json", "-d", "1", "-n", "3").Output()
	if err != nil {
		t.Fatalf("ctxtop: %v\n%s", err, exitStderr(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	// On a loaded machine a side may be on a CPU at every look of one
	// interval; the last two reports are judged together.
	futex := 0
	for _, line := range lines[1:] {
		futex += checkThrottledAndFutex(t, line, name, spinners)
	}
	if futex == 0 {
		t.Errorf("neither futex ping-pong thread says futex in the last two reports:\n%s", lines[len(lines)-1])
	}
}

// checkThrottledAndFutex checks one JSON report and returns how many of the
// ping-pong threads said futex.
func checkThrottledAndFutex(t *testing.T, line, name string, spinners []*exec.Cmd) int {
	t.Helper()
	var r struct {
		Threads []struct {
			PID    int                `json:"pid"`
			Comm   string             `json:"comm"`
			Reason string             `json:"reason"`
			WaitOn map[string]float64 `json:"wait_on"`
			Why    struct {
				Kind      string `json:"kind"`
				Throttled *int   `json:"cgroup_throttled_pct"`
				On        []struct {
					Reason string `json:"reason"`
				} `json:"on"`
			} `json:"why"`
		} `json:"threads"`
		Cgroups []struct {
			Cgroup       string   `json:"cgroup"`
			Threads      int      `json:"threads"`
			ThrottledPct *float64 `json:"throttled_pct"`
		} `json:"cgroups"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatal(err)
	}
	found, throttled := false, false
	for _, c := range r.Cgroups {
		if c.Cgroup == "/"+name {
			found = true
			throttled = c.ThrottledPct != nil && *c.ThrottledPct >= 20
			if c.Threads != 4 || c.ThrottledPct == nil || *c.ThrottledPct < 20 {
				t.Errorf("cgroup row: %d threads, throttled %v%%; want 4 threads throttled ≥ 20%%", c.Threads, deref(c.ThrottledPct))
			}
		}
	}
	if !found {
		t.Errorf("no row for /%s in %s", name, line)
	}
	spinning := map[int]bool{}
	for _, c := range spinners {
		spinning[c.Process.Pid] = true
	}
	futex := 0
	for _, th := range r.Threads {
		if th.Comm == "ping-futex" || th.Comm == "pong-futex" {
			if th.WaitOn["futex wait"] >= 0.5 && th.Why.Kind == "blocking" && len(th.Why.On) > 0 && th.Why.On[0].Reason == "futex" {
				futex++
			} else {
				t.Logf("%s: %q %v", th.Comm, th.Reason, th.WaitOn)
			}
		}
		if throttled && spinning[th.PID] && (th.Why.Kind != "preempted" || th.Why.Throttled == nil) {
			t.Errorf("spinner in the throttled cgroup says %q", th.Reason)
		}
	}
	return futex
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestHostileCgroupNameLiveAndReplay: a real cgroup named with an escape
// sequence, a tab and a bidi override. Live JSON must not carry them raw,
// and must show the very path the replay of the same run shows.
func TestHostileCgroupNameLiveAndReplay(t *testing.T) {
	bin := testutil.Binary(t)
	name, dir := v1CPUCgroup(t, "-\x1b[31m\tred\u202eevil")
	spinner := exec.Command("sh", "-c", "while :; do :; done")
	t.Cleanup(func() {
		if spinner.Process != nil {
			_ = spinner.Process.Kill()
			_ = spinner.Wait()
		}
		for range 50 {
			if os.Remove(dir) == nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("could not remove %q", dir)
	})
	// 5% of a CPU: it shows, and costs the shared machine little.
	if err := os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte("5000"), 0); err != nil {
		t.Fatal(err)
	}
	if err := spinner.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(spinner.Process.Pid)
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(pid), 0); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "hostile.ctxrec")
	live, err := exec.Command(bin, "-b", "-o", "json", "-d", "0.3", "-n", "2", "--cgroups", "-p", pid, "--record", file).Output()
	if err != nil {
		t.Fatalf("live: %v\n%s", err, exitStderr(err))
	}
	replayed, err := exec.Command(bin, "replay", "-b", "-o", "json", "--cgroups", file).Output()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, exitStderr(err))
	}
	paths := func(out []byte) []string {
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var r struct {
				Cgroups []struct {
					Cgroup string `json:"cgroup"`
				} `json:"cgroups"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%v: %q", err, line)
			}
			for _, c := range r.Cgroups {
				got = append(got, c.Cgroup)
			}
		}
		return got
	}
	livePaths, replayPaths := paths(live), paths(replayed)
	clean := sanitize.Name("/" + name)
	if !slices.Contains(livePaths, clean) {
		t.Errorf("live JSON has no row %q: %q", clean, livePaths)
	}
	for _, p := range livePaths {
		if !sanitize.Clean(p) {
			t.Errorf("live JSON carries a raw control or format character: cgroup %q", p)
		}
	}
	if diff := cmp.Diff(livePaths, replayPaths); diff != "" {
		t.Errorf("cgroups[].cgroup (-live +replay):\n%s", diff)
	}
}

// threadNamed says whether some thread on the host has this comm.
func threadNamed(comm string) bool {
	paths, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/comm")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == comm {
			return true
		}
	}
	return false
}

// v1CPUCgroup makes a cgroup in the v1 cpu hierarchy named for this test
// run with suffix, skipping where there is none or no privilege; the
// caller removes it once its processes are gone.
func v1CPUCgroup(t *testing.T, suffix string) (name, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating a cgroup needs root; skipped")
	}
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	mounts, err := fs.CgroupMounts()
	if err != nil || mounts.CPU == "" || mounts.CPURoot != "/" {
		t.Skip("no v1 cpu hierarchy here (the sampler's test covers cgroup v2); skipped")
	}
	name = fmt.Sprintf("ctxtop-e2e-%d-%d%s", os.Getpid(), time.Now().UnixNano(), suffix)
	dir = filepath.Join(mounts.CPU, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a cgroup: %v", err)
	}
	return name, dir
}
