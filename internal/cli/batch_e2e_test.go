package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

type jsonReport struct {
	Time      time.Time `json:"time"`
	Interval  float64   `json:"interval_s"`
	System    map[string]any
	Processes []struct {
		PID     int     `json:"pid"`
		Comm    string  `json:"comm"`
		Threads int     `json:"threads"`
		Vol     float64 `json:"cswch_per_s"`
		Invol   float64 `json:"nvcswch_per_s"`
	}
	Threads []struct {
		PID   int     `json:"pid"`
		TID   int     `json:"tid"`
		Comm  string  `json:"comm"`
		Vol   float64 `json:"cswch_per_s"`
		Invol float64 `json:"nvcswch_per_s"`
	}
}

// counterLog records a thread's status counters every few milliseconds, so
// the test can tell what they were at any instant ctxtop sampled.
type counterLog struct {
	mu   sync.Mutex
	at   []time.Time
	vals map[int][]float64 // per TID: voluntary + involuntary
}

func (l *counterLog) poll(fs procfs.FS, pid int, tids []int, stop <-chan struct{}) {
	for {
		now := time.Now()
		row := make([]float64, len(tids))
		for i, tid := range tids {
			st, err := fs.TaskStatus(pid, tid)
			if err != nil {
				return
			}
			row[i] = float64(st.VoluntarySwitches + st.InvoluntarySwitches)
		}
		l.mu.Lock()
		l.at = append(l.at, now)
		for i, tid := range tids {
			l.vals[tid] = append(l.vals[tid], row[i])
		}
		l.mu.Unlock()
		select {
		case <-stop:
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// at interpolates the TID's counter at time t.
func (l *counterLog) valueAt(tid int, t time.Time) (float64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := sort.Search(len(l.at), func(i int) bool { return !l.at[i].Before(t) })
	if i == 0 || i == len(l.at) {
		return 0, false
	}
	t0, t1 := l.at[i-1], l.at[i]
	v0, v1 := l.vals[tid][i-1], l.vals[tid][i]
	f := float64(t.Sub(t0)) / float64(t1.Sub(t0))
	return v0 + f*(v1-v0), true
}

// TestBatchJSONMatchesKernelCounters runs ctxtop on a real workload and
// checks every rate it prints against the workload's own status files over
// the same window, and that the process row is the sum of its threads.
func TestBatchJSONMatchesKernelCounters(t *testing.T) {
	bin := testutil.Binary(t)
	pid, tids := testutil.StartPingPong(t)
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	log := &counterLog{vals: map[int][]float64{}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { log.poll(fs, pid, tids, stop); close(done) }()
	time.Sleep(50 * time.Millisecond)

	out, err := exec.Command(bin, "-b", "-o", "json", "-d", "0.5", "-n", "4", "-p", strconv.Itoa(pid)).Output()
	time.Sleep(20 * time.Millisecond)
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("ctxtop: %v\n%s", err, exitStderr(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		t.Fatalf("got %d JSON lines, want 4:\n%s", len(lines), out)
	}
	for n, line := range lines {
		var r jsonReport
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", n, err, line)
		}
		from := r.Time.Add(-time.Duration(r.Interval * float64(time.Second)))
		sumVol, sumInvol := 0.0, 0.0
		for _, tid := range tids {
			var got float64
			found := false
			for _, th := range r.Threads {
				if th.TID == tid {
					got, found = th.Vol+th.Invol, true
					if th.PID != pid || !strings.HasPrefix(th.Comm, "pp-p") {
						t.Errorf("line %d: thread %d reported as pid %d comm %q", n, tid, th.PID, th.Comm)
					}
				}
			}
			if !found {
				t.Errorf("line %d: workload thread %d missing from %s", n, tid, line)
				continue
			}
			v0, ok0 := log.valueAt(tid, from)
			v1, ok1 := log.valueAt(tid, r.Time)
			if !ok0 || !ok1 {
				t.Fatalf("line %d: window %v..%v outside the counter log", n, from, r.Time)
			}
			want := (v1 - v0) / r.Interval
			if want < 100 {
				t.Fatalf("workload only switched %.0f/s; too idle to compare", want)
			}
			if rel := math.Abs(got-want) / want; rel > 0.10 {
				t.Errorf("line %d: thread %d: ctxtop says %.0f switches/s, its status files say %.0f (%.1f%% off)", n, tid, got, want, 100*rel)
			}
		}
		for _, th := range r.Threads {
			if th.PID == pid {
				sumVol += th.Vol
				sumInvol += th.Invol
			}
		}
		var proc *struct {
			PID     int     `json:"pid"`
			Comm    string  `json:"comm"`
			Threads int     `json:"threads"`
			Vol     float64 `json:"cswch_per_s"`
			Invol   float64 `json:"nvcswch_per_s"`
		}
		for i := range r.Processes {
			if r.Processes[i].PID == pid {
				proc = &r.Processes[i]
			}
		}
		if proc == nil {
			t.Errorf("line %d: no process row for %d", n, pid)
			continue
		}
		if math.Abs(proc.Vol-sumVol) > 0.05 || math.Abs(proc.Invol-sumInvol) > 0.05 {
			t.Errorf("line %d: process row %.2f/%.2f, sum of its thread rows %.2f/%.2f", n, proc.Vol, proc.Invol, sumVol, sumInvol)
		}
		if proc.Threads < 3 {
			t.Errorf("line %d: process has %d threads, want at least 3 (main, ping, pong)", n, proc.Threads)
		}
	}
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}

func TestBatchJSONKeys(t *testing.T) {
	bin := testutil.Binary(t)
	pid, _ := testutil.StartPingPong(t)
	out, err := exec.Command(bin, "-b", "-o", "json", "-d", "0.2", "-n", "1", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("ctxtop: %v\n%s", err, exitStderr(err))
	}
	var r map[string]any
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		sort.Strings(k)
		return k
	}
	if diff := cmp.Diff([]string{"cgroups", "host", "interval_s", "processes", "system", "threads", "time"}, keys(r)); diff != "" {
		t.Errorf("top-level keys (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"cpu_model", "cpus", "hostname", "kernel", "mem_total_bytes", "uptime_s"}, keys(r["host"].(map[string]any))); diff != "" {
		t.Errorf("host keys (-want +got)\n%s", diff)
	}
	sys := keys(r["system"].(map[string]any))
	wantSys := []string{"baseline_cs_per_s", "cpus", "cs_per_s", "intr_per_s", "procs_blocked", "procs_running", "resched_ipi_per_s", "source", "unattributed_cs_per_s", "unreadable_tasks"}
	if _, err := os.Stat("/proc/pressure/cpu"); err == nil {
		wantSys = append(wantSys, "psi_cpu_some_avg10")
		sort.Strings(wantSys)
	}
	if diff := cmp.Diff(wantSys, sys); diff != "" {
		t.Errorf("system keys (-want +got)\n%s", diff)
	}
	threads := r["threads"].([]any)
	procs := r["processes"].([]any)
	if len(threads) < 2 || len(procs) != 1 {
		t.Fatalf("want the workload's threads and its process, got %d threads, %d processes", len(threads), len(procs))
	}
	if diff := cmp.Diff([]string{"comm", "cpu_pct", "cswch_per_s", "nvcswch_per_s", "pid", "threads"}, keys(procs[0].(map[string]any))); diff != "" {
		t.Errorf("process keys (-want +got)\n%s", diff)
	}
	// wait_on is there only when a look found the thread asleep.
	th0 := threads[0].(map[string]any)
	if w, ok := th0["wait_on"].(map[string]any); ok {
		for reason := range w {
			if !strings.HasPrefix(reason, "pipe ") && reason != "futex wait" {
				t.Errorf("pipe ping-pong thread waits on %q", reason)
			}
		}
		delete(th0, "wait_on")
	}
	// earlier_wait_ms is there only when a wait began before the interval.
	delete(th0, "earlier_wait_ms")
	if diff := cmp.Diff([]string{"comm", "cpu_pct", "cpus_allowed", "cswch_per_s", "hot", "migrations_per_s", "nvcswch_per_s", "pid", "reason", "tid", "wait_pct", "why"}, keys(th0)); diff != "" {
		t.Errorf("thread keys (-want +got)\n%s", diff)
	}
	// Ping-pong at thousands of switches/s is over the default --hot 1000,
	// and every hand-off is a block on a pipe: "blocking".
	top := threads[0].(map[string]any)
	why, _ := top["why"].(map[string]any)
	if top["hot"] != true || why["kind"] != "blocking" {
		t.Errorf("busiest workload thread: hot=%v reason=%q why=%v, want hot and blocking", top["hot"], top["reason"], top["why"])
	}
}

func TestBatchTextReport(t *testing.T) {
	bin := testutil.Binary(t)
	pid, _ := testutil.StartPingPong(t)
	cmd := exec.Command(bin, "-d", "0.2", "-n", "2", "-p", strconv.Itoa(pid))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ctxtop: %v\n%s", err, stderr.String())
	}
	// stdout is a pipe, not a terminal: batch mode, and a note saying so.
	if !strings.Contains(stderr.String(), "not a terminal") {
		t.Errorf("stderr = %q, want a note that batch mode was chosen", stderr.String())
	}
	text := stdout.String()
	for _, col := range []string{"PID", "TID", "COMM", "CSWCH/s", "NVCSWCH/s", "TOTAL/s", "%CPU", "WAIT%", "CPUS", "HOT"} {
		if !strings.Contains(text, col) {
			t.Errorf("header column %s missing:\n%s", col, text)
		}
	}
	if strings.Count(text, "pp-ping") != 2 || strings.Count(text, "pp-pong") != 2 {
		t.Errorf("want both workload threads in each of 2 reports:\n%s", text)
	}
}

func TestBatchOnFixtureTree(t *testing.T) {
	bin := testutil.Binary(t)
	root := filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	out, err := exec.Command(bin, "-b", "-o", "json", "--proc", root, "-d", "0.1", "-n", "2").Output()
	if err != nil {
		t.Fatalf("ctxtop --proc fixture: %v\n%s", err, exitStderr(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 reports, got:\n%s", out)
	}
	var r jsonReport
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil {
		t.Fatal(err)
	}
	// The tree does not change, so nothing switches: no rows, and the
	// captured system values come through.
	if len(r.Threads) != 0 || len(r.Processes) != 0 {
		t.Errorf("static tree gave rows: %s", lines[0])
	}
	if r.System["cpus"] != float64(2) {
		t.Errorf("cpus = %v, want 2 from the fixture's interrupts header", r.System["cpus"])
	}

	// -p on the fixture: the malformed and vanishing roles do not stop it.
	out, err = exec.Command(bin, "-b", "--proc", root, "-d", "0.1", "-n", "1", "-p", "100,200,300").Output()
	if err != nil {
		t.Fatalf("ctxtop -p on fixture: %v\n%s", err, exitStderr(err))
	}
	if !strings.Contains(string(out), "unreadable") {
		t.Errorf("the malformed thread 301 should be reported as unreadable:\n%s", out)
	}
}

// TestUnreadableTasksAreCountedNotFatal runs ctxtop as an unprivileged user on
// a copy of the fixture whose PID 400 belongs to nobody else and is mode 000:
// another user's tasks.
func TestUnreadableTasksAreCountedNotFatal(t *testing.T) {
	// Not t.TempDir: its parent is private to root, and the run below may
	// be as nobody, who must reach both the tree and a copy of the binary.
	root, err := os.MkdirTemp("", "ctxtop-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "ctxtop")
	src := filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	for _, c := range [][]string{{"cp", testutil.Binary(t), bin}, {"cp", "-r", src, root}, {"chmod", "-R", "a+rX", root}} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
	tree := filepath.Join(root, "proc")
	for _, tid := range []string{"400", "401"} {
		for _, f := range []string{"schedstat", "status", "stat", "comm"} {
			if err := os.Chmod(filepath.Join(tree, "400", "task", tid, f), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(bin, "-b", "--proc", tree, "-d", "0.1", "-n", "1")
	if os.Geteuid() == 0 {
		// Root reads mode-000 files; run as nobody, as an on-call engineer
		// without sudo would.
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ctxtop with unreadable tasks failed: %v\n%s", err, stderr.String())
	}
	// 400, 401 and the malformed 301.
	if !strings.Contains(stdout.String(), "3 tasks unreadable") {
		t.Errorf("want \"3 tasks unreadable\" in the report:\n%s", stdout.String())
	}
	// JSON counts them too.
	cmd = exec.Command(bin, "-b", "-o", "json", "--proc", tree, "-d", "0.1", "-n", "1")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ctxtop -o json with unreadable tasks failed: %v\n%s", err, exitStderr(err))
	}
	var r struct {
		System struct {
			Unreadable *int `json:"unreadable_tasks"`
		}
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("not one JSON report: %v\n%s", err, out)
	}
	if r.System.Unreadable == nil || *r.System.Unreadable != 3 {
		t.Errorf("JSON system.unreadable_tasks = %v, want 3:\n%s", r.System.Unreadable, out)
	}
}

func TestBadInputIsOneLineAndNonZero(t *testing.T) {
	bin := testutil.Binary(t)
	notProc := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"--frobnicate"}, "unknown flag"},
		{"bad delay", []string{"-b", "-d", "soon"}, "delay"},
		{"zero delay", []string{"-b", "-d", "0"}, "delay"},
		{"negative iterations", []string{"-b", "-n", "-3"}, "iterations"},
		{"missing pid", []string{"-b", "-p", "999999999"}, "no such process"},
		{"junk pid", []string{"-b", "-p", "12,abc"}, "not a PID"},
		{"not a procfs", []string{"-b", "--proc", notProc}, "not a procfs"},
		{"missing procfs", []string{"-b", "--proc", filepath.Join(notProc, "nope")}, "--proc " + filepath.Join(notProc, "nope") + ": no such directory"},
		{"file as procfs", []string{"-b", "--proc", "/dev/null"}, "--proc /dev/null: not a directory"},
		{"bad output", []string{"-b", "-o", "xml"}, "json"},
		{"bad hot", []string{"-b", "--hot", "-5"}, "hot"},
		{"stray argument", []string{"-b", "extra"}, "unknown command"},
		{"negative stack bytes", []string{"-b", "--stacks", "--stack-bytes", "-1"}, "--stack-bytes must be 0 to 8191"},
		{"huge stack bytes", []string{"-b", "--stacks", "--stack-bytes", "65536"}, "--stack-bytes must be 0 to 8191"},
		{"record stack bytes", []string{"record", "-o", filepath.Join(notProc, "r.ctxrec"), "--stacks", "--stack-bytes", "9000"}, "--stack-bytes must be 0 to 8191"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, tt.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() == 0 {
				t.Fatalf("exit = %v, want a non-zero exit", err)
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "ctxtop: ") {
				t.Errorf("stderr = %q, want exactly one line starting with \"ctxtop: \"", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("stderr = %q, want it to mention %q", msg, tt.want)
			}
			if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
				t.Errorf("stack trace on bad input: %s", msg)
			}
		})
	}
}

func TestPidTargetExitEndsTheRun(t *testing.T) {
	bin := testutil.Binary(t)
	sleeper := exec.Command("sleep", "1")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	go sleeper.Wait() // reap it, as its parent shell would
	start := time.Now()
	cmd := exec.Command(bin, "-b", "-d", "0.2", "-p", strconv.Itoa(sleeper.Process.Pid))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ctxtop: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "exited") {
		t.Errorf("stderr = %q, want it to say the target exited", stderr.String())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to notice the target was gone", d)
	}
}

func TestVersion(t *testing.T) {
	out, err := exec.Command(testutil.Binary(t), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "ctxtop ") || !strings.Contains(string(out), "go1.") || !strings.Contains(string(out), "commit") {
		t.Errorf("version = %q", out)
	}
}
