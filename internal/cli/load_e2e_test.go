package cli_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/bench"
	"github.com/ctxtop/ctxtop/internal/load"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

func TestLoadBadFlags(t *testing.T) {
	bin := testutil.Binary(t)
	for _, args := range [][]string{
		{"--cpus", "99"},
		{"--cpus", "x"},
		{"--cpus", "0-3"},
		{"--mode", "nope"},
		{"--pairs", "0"},
		{"--duration", "-1s"},
		{"--duration", "soon"},
		{"--round-trips", "0"},
		{"--mode", "syscall", "--cpus", "0,1"},
		{"-o", "yaml"},
		{"--working-set", "1T"},
		{"--working-set", "-64K"},
		{"--working-set", "lots"},
		{"--working-set", "64K", "--mode", "goroutine"},
		{"--mode", "pool", "--threads", "100000"},
		{"--mode", "pool", "--threads", "0"},
		{"--mode", "pool", "--threads", "-3"},
		{"--mode", "pool", "--work", "0"},
		{"--mode", "pool", "--work", "-1ms"},
		{"--mode", "pool", "--work", "1h"},
		{"--mode", "pool", "--work", "fast"},
		{"--mode", "pool", "--cpu-quota", "0"},
		{"--mode", "pool", "--cpu-quota", "-0.5"},
		{"--mode", "pool", "--cpu-quota", "NaN"},
		{"--mode", "pool", "--cpus", "0"},
		{"--mode", "poll", "--period", "0"},
		{"--mode", "poll", "--period", "1ns"},
		{"--mode", "poll", "--period", "-5ms"},
		{"--mode", "poll", "--work", "1ms"},
		{"--mode", "futex", "--threads", "4"},
		{"--mode", "pipe", "--period", "5ms"},
	} {
		cmd := exec.Command(bin, append([]string{"load"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("load %v: %v, want a non-zero exit", args, err)
		}
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "ctxtop: ") {
			t.Errorf("load %v: stderr %q, want one line starting ctxtop:", args, stderr.String())
		}
		if stdout.Len() != 0 {
			t.Errorf("load %v: stdout %q, want nothing", args, stdout.String())
		}
	}
}

// TestNumericFlagErrors: every flag that takes a number or a time answers
// a typo with one line naming the flag, not the parser's own wording.
func TestNumericFlagErrors(t *testing.T) {
	bin := testutil.Binary(t)
	for _, args := range [][]string{
		{"-b", "--hot", "abc"},
		{"-b", "--top", "abc"},
		{"-b", "--top", "99999999999999999999"},
		{"-b", "-n", "x"},
		{"-b", "-d", "x"},
		{"-b", "-p", "1,x"},
		{"load", "--duration", "soon"},
		{"load", "--round-trips", "-1"},
		{"load", "--round-trips", "1.5"},
		{"load", "--pairs", "two"},
		{"load", "--gomaxprocs", "x"},
		{"load", "--mode", "pool", "--threads", "x"},
		{"load", "--mode", "pool", "--cpu-quota", "half"},
		{"load", "--mode", "pool", "--work", "x"},
		{"load", "--mode", "poll", "--period", "x"},
		{"load", "--working-set", "x"},
		{"bench", "--working-set", "x"},
		{"bench", "--duration", "x"},
		{"bench", "--repeats", "x"},
		{"demo", "--step", "x"},
	} {
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("%v: %v, want a non-zero exit", args, err)
		}
		msg := stderr.String()
		lines := strings.Split(strings.TrimRight(msg, "\n"), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "ctxtop: ") {
			t.Errorf("%v: stderr %q, want one line starting ctxtop:", args, msg)
		}
		for _, raw := range []string{"strconv", "parsing", "invalid syntax", "time: "} {
			if strings.Contains(msg, raw) {
				t.Errorf("%v: stderr %q holds the library's wording %q", args, msg, raw)
			}
		}
		flag := args[len(args)-2]
		if !strings.Contains(msg, flag) {
			t.Errorf("%v: stderr %q does not name %s", args, msg, flag)
		}
	}
}

// TestLoadDurationSeconds: --duration takes plain seconds, as -d does.
func TestLoadDurationSeconds(t *testing.T) {
	out, err := exec.Command(testutil.Binary(t), "load", "-o", "json", "--duration", "0.3").Output()
	if err != nil {
		t.Fatalf("load --duration 0.3: %v", err)
	}
	var got struct {
		DurationS float64 `json:"duration_s"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("load -o json printed %q: %v", out, err)
	}
	if got.DurationS < 0.25 || got.DurationS > 5 {
		t.Errorf("duration_s %v for --duration 0.3", got.DurationS)
	}
}

func TestLoadJSON(t *testing.T) {
	out, err := exec.Command(testutil.Binary(t), "load", "-o", "json", "--duration", "300ms").Output()
	if err != nil {
		t.Fatalf("load -o json: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("load -o json printed %q: %v", out, err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"call_ipis", "cpus", "duration_s", "hw", "hw_note", "migrations", "migrations_per_round_trip", "mode", "ns_per_round_trip", "ns_per_switch", "pairs",
		"resched_ipis", "resched_ipis_per_round_trip", "round_trips", "switches_counted", "switches_involuntary", "switches_per_round_trip", "switches_voluntary", "wakeup_ipis_per_round_trip"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("JSON keys (-want +got):\n%s", diff)
	}
	if got["mode"] != "futex" || got["pairs"] != 1.0 {
		t.Errorf("mode %v, pairs %v; want futex, 1", got["mode"], got["pairs"])
	}
	if d, _ := got["duration_s"].(float64); d < 0.25 || d > 5 {
		t.Errorf("duration_s %v for a 300 ms run", got["duration_s"])
	}
	if n, _ := got["round_trips"].(float64); n < 10 {
		t.Errorf("round_trips %v", got["round_trips"])
	}
}

// TestLoadGoroutineHonest: goroutine mode says what its switches are (the
// runtime's threads, counted over the whole process, as a rate), prints no
// ns per switch, and its help no longer claims there are none.
func TestLoadGoroutineHonest(t *testing.T) {
	bin := testutil.Binary(t)
	help, err := exec.Command(bin, "load", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(help), "no kernel switch at all") || !strings.Contains(string(help), "idle P") {
		t.Errorf("load --help on goroutine mode:\n%s", help)
	}
	out, err := exec.Command(bin, "load", "--mode", "goroutine", "--duration", "0.3").Output()
	if err != nil {
		t.Fatalf("load --mode goroutine: %v", err)
	}
	if !strings.Contains(string(out), "switches/s, kernel-counted over every thread of the workload process") {
		t.Errorf("goroutine summary does not count the process's switches as such:\n%s", out)
	}
	if strings.Contains(string(out), "ns per switch") {
		t.Errorf("goroutine summary gives ns per switch under one switch per round trip:\n%s", out)
	}
}

// TestLoadGoroutinePinned: --cpus pins every thread of the workload
// process, as taskset -c would, while the run lasts.
func TestLoadGoroutinePinned(t *testing.T) {
	cmd := exec.Command(testutil.Binary(t), "load", "--mode", "goroutine", "--cpus", "0", "--duration", "1.5")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := waitChild(t, cmd.Process.Pid)
	time.Sleep(500 * time.Millisecond)
	dir := "/proc/" + strconv.Itoa(child) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				got[e.Name()] = strings.TrimSpace(v)
			}
		}
	}
	want := map[string]string{}
	for k := range got {
		want[k] = "0"
	}
	if diff := cmp.Diff(want, got); diff != "" || len(got) < 2 {
		t.Errorf("threads of load --mode goroutine --cpus 0, Cpus_allowed_list (-want +got):\n%s", diff)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("load --mode goroutine --cpus 0: %v", err)
	}
	if !strings.Contains(stdout.String(), "goroutine, both on CPU 0") {
		t.Errorf("summary:\n%s", stdout.String())
	}
}

func TestBenchJSON(t *testing.T) {
	out, err := exec.Command(testutil.Binary(t), "bench", "-o", "json", "--modes", "futex,goroutine", "--duration", "0.1", "--repeats", "2").Output()
	if err != nil {
		t.Fatalf("bench -o json: %v", err)
	}
	var runs []struct {
		Mode       string `json:"mode"`
		CPUs       []int  `json:"cpus"`
		RoundTrips uint64 `json:"round_trips"`
	}
	if err := json.Unmarshal(out, &runs); err != nil {
		t.Fatalf("bench -o json printed %q: %v", out, err)
	}
	// futex unpinned, on one CPU, on two when two are allowed; goroutines
	// unpinned and on one CPU; each cell twice, its runs side by side.
	if len(runs) < 8 || len(runs)%2 != 0 || runs[0].Mode != "futex" || len(runs[0].CPUs) != 0 || runs[len(runs)-1].Mode != "goroutine" {
		t.Fatalf("bench runs %+v", runs)
	}
	for i := 0; i < len(runs); i += 2 {
		if runs[i].Mode != runs[i+1].Mode || !cmp.Equal(runs[i].CPUs, runs[i+1].CPUs) {
			t.Errorf("runs %d and %d are not one cell's repeats: %+v, %+v", i, i+1, runs[i], runs[i+1])
		}
	}
	// A 100 ms run across two CPUs of a machine at a load average in the
	// hundreds can end before its first round trip; a cell none of whose
	// runs made one cannot.
	for i := 0; i < len(runs); i += 2 {
		if runs[i].RoundTrips == 0 && runs[i+1].RoundTrips == 0 {
			t.Errorf("%s on %v: no round trips in either run", runs[i].Mode, runs[i].CPUs)
		}
	}
}

// TestBenchMarkdownAndPlot: -o markdown prints a table per experiment with
// a row per cell and the range of the runs; --plot writes a valid SVG with
// one bar per cell.
func TestBenchMarkdownAndPlot(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "bench.svg")
	out, err := exec.Command(testutil.Binary(t), "bench", "-o", "markdown", "--modes", "syscall,futex", "--duration", "0.1", "--repeats", "2", "--plot", svg).Output()
	if err != nil {
		t.Fatalf("bench -o markdown --plot: %v", err)
	}
	text := string(out)
	// Rows of the main tables only: each experiment's second table (IPIs,
	// counters) repeats the cells.
	var headers, rows int
	main := false
	for line := range strings.SplitSeq(text, "\n") {
		switch {
		case strings.HasPrefix(line, "| mode | pinning | ns/trip | range |"):
			headers++
			main = true
		case strings.HasPrefix(line, "| mode |"), line == "":
			main = false
		case main && (strings.HasPrefix(line, "| syscall |") || strings.HasPrefix(line, "| futex |")):
			rows++
		}
	}
	cells := rows
	if headers != 2 || cells < 4 || !strings.Contains(text, "### No context switch") || !strings.Contains(text, "### Context switches") || !strings.Contains(text, "2 runs each") {
		t.Errorf("markdown: %d tables, %d rows:\n%s", headers, rows, text)
	}
	if ents, _ := os.ReadDir(filepath.Dir(svg)); len(ents) != 1 {
		t.Errorf("--plot left %d files beside the chart, want only it", len(ents))
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	root, bars := "", 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("--plot wrote invalid XML: %v", err)
		}
		if e, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = e.Name.Local
			}
			for _, a := range e.Attr {
				if e.Name.Local == "path" && a.Name.Local == "style" && isBarFill(a.Value) {
					bars++
				}
			}
		}
	}
	// A bar per cell, and a legend swatch per pinning shown.
	if root != "svg" || bars < cells+2 || bars > cells+3 {
		t.Errorf("--plot: root %q, %d bar-filled paths for %d cells", root, bars, cells)
	}
}

func isBarFill(style string) bool {
	style = strings.ToLower(style)
	for _, c := range bench.BarColors {
		if strings.Contains(style, fmt.Sprintf("fill:#%02x%02x%02x", c.R, c.G, c.B)) {
			return true
		}
	}
	return false
}

// TestBenchBadInput: bad flags fail at once, with one line and nothing run.
func TestBenchBadInput(t *testing.T) {
	bin := testutil.Binary(t)
	for _, args := range [][]string{
		{"-o", "yaml"},
		{"--plot", filepath.Join(t.TempDir(), "no", "such", "dir", "x.svg")},
		{"--plot", "/proc/version"},
		{"--repeats", "0"},
		{"--duration", "0"},
		{"--modes", "futex,nope"},
	} {
		start := time.Now()
		cmd := exec.Command(bin, append([]string{"bench", "--duration", "5"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Errorf("bench %v: %v, want a non-zero exit", args, err)
		}
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "ctxtop: ") {
			t.Errorf("bench %v: stderr %q, want one line starting ctxtop:", args, stderr.String())
		}
		if stdout.Len() != 0 || time.Since(start) > 4*time.Second {
			t.Errorf("bench %v: ran for %v, printed %q; want a refusal before any run", args, time.Since(start), stdout.String())
		}
	}
}

// TestLoadChildDies: the workload process and process mode's partner must
// not outlive ctxtop, whether ctxtop stops cleanly on SIGTERM or is killed
// outright.
func TestLoadChildDies(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		cmd := exec.Command(testutil.Binary(t), "load", "--mode", "process", "--duration", "30s")
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		// A file, not a buffer: read when the test fails, even with ctxtop
		// still running.
		stderr, err := os.CreateTemp(t.TempDir(), "stderr")
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			werr := cmd.Wait() // "already called" when the test got that far
			if t.Failed() {
				b, _ := os.ReadFile(stderr.Name())
				t.Logf("%v: ctxtop load ended %v; its stderr: %q", sig, werr, b)
			}
		})
		// ctxtop's workload process, and its partner in process mode.
		child := waitChild(t, cmd.Process.Pid)
		partner := waitChild(t, child)
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		if sig == syscall.SIGTERM {
			if err != nil {
				t.Errorf("SIGTERM: ctxtop load exited with %v, want a clean stop", err)
			}
			if !strings.Contains(stdout.String(), "round trips") {
				t.Errorf("SIGTERM: no summary in %q", stdout.String())
			}
		}
		deadline := time.Now().Add(3 * time.Second)
		for _, pid := range []int{child, partner} {
			for alive(pid) {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("%v: process %d outlived ctxtop by 3 s", sig, pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}

// waitChild finds the child process of ppid, scanning /proc for its PPID.
func waitChild(t *testing.T, ppid int) int {
	t.Helper()
	// Beside CPU hogs the process mode's second process was not there
	// 10 s after its parent: a re-executed binary waits its turn for a CPU
	// at every step of its start. The kernel's lists of the parent's
	// children are looked at until one appears, the parent is gone, or a
	// deadline far past any start seen passes.
	start := time.Now()
	deadline := start.Add(45 * time.Second)
	for {
		kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", ppid))
		for _, k := range kids {
			b, err := os.ReadFile(k)
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					if d := time.Since(start); d > time.Second {
						t.Logf("child %d of %d appeared after %v", pid, ppid, d.Round(time.Millisecond))
					}
					return pid
				}
			}
		}
		if !alive(ppid) {
			t.Fatalf("%d exited with no child", ppid)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no child of %d appeared in %v", ppid, time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive: the process exists and is not a zombie awaiting its reaper.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || !bytes.HasPrefix(bytes.TrimSpace(b[i+1:]), []byte("Z"))
}

// TestCPUQuotaNeedsRoot: --cpu-quota makes a cgroup; anyone else gets one
// line that says so, and no pool runs.
func TestCPUQuotaNeedsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run ctxtop as another user")
	}
	dir, err := os.MkdirTemp("", "ctxtop-quota-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := dir + "/ctxtop"
	for _, c := range [][]string{{"cp", testutil.Binary(t), bin}, {"chmod", "-R", "a+rX", dir}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	cmd := exec.Command(bin, "load", "--mode", "pool", "--threads", "2", "--cpu-quota", "0.5", "--duration", "0.2")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Errorf("--cpu-quota as nobody: %v, want a non-zero exit", err)
	}
	if got := stderr.String(); !strings.Contains(got, "needs root") || strings.Count(got, "\n") != 1 {
		t.Errorf("--cpu-quota as nobody: stderr %q, want one line saying it needs root", got)
	}
}

// TestLoadExperiments runs each new experiment as a user would try it and
// checks the summary names its figures.
func TestLoadExperiments(t *testing.T) {
	bin := testutil.Binary(t)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--mode", "pool", "--threads", "3", "--duration", "0.3"}, []string{"items/s", "involuntary switches/s", "run-queue wait", "wake-up IPIs"}},
		{[]string{"--mode", "poll", "--threads", "2", "--period", "5ms", "--duration", "0.3"}, []string{"wake-ups/s", "the period promises 400", "voluntary switches/s per thread"}},
		{[]string{"--working-set", "64K", "--cpus", "0", "--duration", "0.3"}, []string{"working set 64K per side", "net of the walks", "wake-up IPIs"}},
	} {
		out, err := exec.Command(bin, append([]string{"load"}, c.args...)...).CombinedOutput()
		if err != nil {
			t.Errorf("load %v: %v\n%s", c.args, err, out)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("load %v: no %q in\n%s", c.args, w, out)
			}
		}
		if !strings.Contains(string(out), "hardware counters: n/a") && !strings.Contains(string(out), "instructions") {
			t.Errorf("load %v: neither hardware counters nor why not in\n%s", c.args, out)
		}
	}
}

// TestBenchAxes: --working-set adds the axis, pool its thread counts, and
// bad sizes are one line.
func TestBenchAxes(t *testing.T) {
	bin := testutil.Binary(t)
	out, err := exec.Command(bin, "bench", "--modes", "futex,pool", "--working-set", "0,64K", "--duration", "0.15", "--repeats", "1", "-o", "json").Output()
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	var runs []load.Summary
	if err := json.Unmarshal(out, &runs); err != nil {
		t.Fatalf("bench -o json printed %q: %v", out, err)
	}
	var sizes []int64
	var threads []int
	for _, r := range runs {
		if r.Mode == load.ModePool {
			threads = append(threads, r.Threads)
			if r.Items == 0 {
				t.Errorf("pool of %d threads did no work", r.Threads)
			}
		} else if len(r.CPUs) == 1 {
			sizes = append(sizes, r.WorkingSet)
		}
		if r.WakeupIPIsPerRoundTrip == nil && r.Units() > 0 {
			t.Errorf("%s: %d round trips (items) but no IPIs per round trip", r.Mode, r.Units())
		}
	}
	// futex on one CPU in the matrix, then at 0 and 64K on the axis.
	if diff := cmp.Diff([]int64{0, 0, 64 << 10}, sizes); diff != "" {
		t.Errorf("working sets of the one-CPU futex runs (-want +got):\n%s", diff)
	}
	allowed, _ := load.AllowedCPUs()
	if n := len(allowed); !cmp.Equal(threads, []int{1, n, 2 * n, 8 * n}) && n > 1 {
		t.Errorf("pool thread counts %v on %d CPUs", threads, n)
	}
	for _, args := range [][]string{
		{"--working-set", "1T"},
		{"--working-set", "64K,64K"},
		{"--working-set", "64K,,1M"},
		{"--modes", "poll"},
	} {
		cmd := exec.Command(bin, append([]string{"bench"}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("bench %v: %v, stderr %q: want one line and a non-zero exit", args, err, stderr.String())
		}
	}
}

// TestLoadSIGTERMToTheGroup: `timeout -s TERM 3 ctxtop load` signals the
// whole process group, the workload process included. The summary must
// carry the kernel's real counts, or say they are unknown; never zeros
// that pass for a run without switches.
func TestLoadSIGTERMToTheGroup(t *testing.T) {
	for _, mode := range []string{"futex", "process"} {
		cmd := exec.Command(testutil.Binary(t), "load", "--mode", mode, "--duration", "30s")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		child := waitChild(t, cmd.Process.Pid)
		if mode == "process" {
			waitChild(t, child)
		}
		// Past the headline: the pairs are running.
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(stdout.String(), "elapsed") && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: ctxtop load after SIGTERM to its group: %v (stderr %q)", mode, err, stderr.String())
		}
		out := stdout.String()
		if !strings.Contains(out, "round trips\n") {
			t.Errorf("%s: no summary after SIGTERM to the group:\n%s", mode, out)
		}
		for _, zero := range []string{"0.00 switches per round trip", "kernel-counted: 0 voluntary, 0 involuntary"} {
			if strings.Contains(out, zero) {
				t.Errorf("%s: summary after SIGTERM to the group prints %q:\n%s", mode, zero, out)
			}
		}
		if !strings.Contains(out, "switches per round trip (kernel-counted") && !strings.Contains(out, "switches: unknown") {
			t.Errorf("%s: summary gives neither the switches nor that they are unknown:\n%s", mode, out)
		}
	}
}

// TestCPUQuotaKilledLeavesNoCgroup: ctxtop load --cpu-quota killed with
// SIGKILL cannot remove its cgroup; the next --cpu-quota run removes it.
func TestCPUQuotaKilledLeavesNoCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--cpu-quota needs root")
	}
	bin := testutil.Binary(t)
	cmd := exec.Command(bin, "load", "--mode", "pool", "--threads", "1", "--cpu-quota", "0.5", "--duration", "60s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := waitChild(t, cmd.Process.Pid)
	var stale string
	deadline := time.Now().Add(10 * time.Second)
	for stale == "" && time.Now().Before(deadline) {
		stale = poolCgroup(t, cmd.Process.Pid)
		time.Sleep(20 * time.Millisecond)
	}
	if stale == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no ctxtop-pool-%d-* cgroup appeared (stderr %q)", cmd.Process.Pid, stderr.String())
	}
	t.Cleanup(func() { os.Remove(stale) })
	cmd.Process.Kill()
	cmd.Wait()
	for alive(child) {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("workload process %d outlived a killed ctxtop", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("the killed run's cgroup %s is already gone (%v): nothing to test", stale, err)
	}
	// The sweep removes only empty groups. The orphaned workload stays
	// listed in cgroup.procs until init reaps it, which a busy host may
	// take a while to do.
	for {
		procs, err := os.ReadFile(filepath.Join(stale, "cgroup.procs"))
		if err != nil || len(bytes.TrimSpace(procs)) == 0 {
			break
		}
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("the killed run's cgroup %s still lists %q", stale, procs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	out, err := exec.Command(bin, "load", "--mode", "pool", "--threads", "1", "--cpu-quota", "0.5", "--duration", "0.2").CombinedOutput()
	if err != nil {
		t.Fatalf("second --cpu-quota run: %v\n%s", err, out)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the killed run's cgroup %s is still there after the next --cpu-quota run", stale)
	}
}

// poolCgroup finds the cgroup ctxtop process pid made for its pool, by the
// name it gives it, in the hierarchies under /sys/fs/cgroup.
func poolCgroup(t *testing.T, pid int) string {
	t.Helper()
	prefix := fmt.Sprintf("ctxtop-pool-%d-", pid)
	var found string
	filepath.WalkDir("/sys/fs/cgroup", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			found = path
			return filepath.SkipAll
		}
		if strings.Count(path, "/") > 6 {
			return filepath.SkipDir
		}
		return nil
	})
	return found
}
