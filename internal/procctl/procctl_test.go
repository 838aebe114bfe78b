package procctl

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// startSleep starts a real process to act on, reaped when the test ends.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// statusField is one line of /proc/PID/task/TID/status.
func statusField(t *testing.T, pid, tid int, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in the status of %d", name, tid)
	return ""
}

// niceOf reads field 19 of /proc/PID/task/TID/stat, as ps -o ni does.
func niceOf(t *testing.T, pid, tid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	n, err := strconv.Atoi(f[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSendTermEndsTheProcess(t *testing.T) {
	cmd := startSleep(t)
	msg, err := Send(Target{PID: cmd.Process.Pid, Comm: "sleep"}, Signals[0])
	if err != nil {
		t.Fatal(err)
	}
	want := "sent SIGTERM to process " + strconv.Itoa(cmd.Process.Pid) + " sleep"
	if msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("sleep ended with %v, want killed by SIGTERM", err)
	}
}

func TestSendToAThreadUsesItsProcess(t *testing.T) {
	cmd := startSleep(t)
	pid := cmd.Process.Pid
	// STOP to the thread: the state shows in /proc, and CONT undoes it.
	if _, err := Send(Target{PID: pid, TID: pid}, Signal{"STOP", unix.SIGSTOP}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.HasPrefix(statusField(t, pid, pid, "State"), "T") {
		if time.Now().After(deadline) {
			t.Fatalf("state %q after SIGSTOP, want T (stopped)", statusField(t, pid, pid, "State"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := Send(Target{PID: pid, TID: pid}, Signal{"CONT", unix.SIGCONT}); err != nil {
		t.Fatal(err)
	}
}

func TestActionsOnAGoneTaskSayItIsGone(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := Target{PID: cmd.Process.Pid}
	thread := Target{PID: cmd.Process.Pid, TID: cmd.Process.Pid}
	for name, do := range map[string]func() (string, error){
		"signal":          func() (string, error) { return Send(gone, Signals[0]) },
		"affinity":        func() (string, error) { return SetAffinity(gone, []int{0}) },
		"thread affinity": func() (string, error) { return SetAffinity(thread, []int{0}) },
		"renice":          func() (string, error) { return Renice(gone, 1) },
	} {
		msg, err := do()
		if err == nil || !strings.Contains(err.Error(), "gone (ESRCH)") {
			t.Errorf("%s on an exited process: %q, %v; want an error saying it is gone (ESRCH)", name, msg, err)
		}
	}
}

func TestSetAffinityPinsEveryThreadOfAProcess(t *testing.T) {
	pid, tids := testutil.StartPingPong(t)
	msg, err := SetAffinity(Target{PID: pid, Comm: "pingpong"}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "now run on CPUs 0") {
		t.Errorf("message %q does not say the threads now run on CPU 0", msg)
	}
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if got := statusField(t, pid, tid, "Cpus_allowed_list"); got != "0" {
			t.Errorf("thread %d: Cpus_allowed_list %q, want 0", tid, got)
		}
	}

	// One thread back to every CPU this test may use; its twin stays.
	var own unix.CPUSet
	if err := unix.SchedGetaffinity(0, &own); err != nil {
		t.Fatal(err)
	}
	var all []int
	for c := range 1024 {
		if own.IsSet(c) {
			all = append(all, c)
		}
	}
	if _, err := SetAffinity(Target{PID: pid, TID: tids[0]}, all); err != nil {
		t.Fatal(err)
	}
	if got, want := statusField(t, pid, tids[0], "Cpus_allowed_list"), FormatCPUs(all); got != want {
		t.Errorf("thread %d: Cpus_allowed_list %q, want %q", tids[0], got, want)
	}
	if got := statusField(t, pid, tids[1], "Cpus_allowed_list"); got != "0" {
		t.Errorf("its twin %d: Cpus_allowed_list %q, want 0 still", tids[1], got)
	}
}

func TestSetAffinityToAnOfflineCPUSaysSo(t *testing.T) {
	cmd := startSleep(t)
	_, err := SetAffinity(Target{PID: cmd.Process.Pid}, []int{1023})
	if err == nil || !strings.Contains(err.Error(), "none of CPUs 1023 is online") {
		t.Errorf("affinity to CPU 1023: %v; want an error saying it is not online", err)
	}
}

func TestRenice(t *testing.T) {
	cmd := startSleep(t)
	pid := cmd.Process.Pid
	tg := Target{PID: pid, Comm: "sleep"}
	before := niceOf(t, pid, pid)
	msg, err := Renice(tg, +1)
	if err != nil {
		t.Fatal(err)
	}
	if got := niceOf(t, pid, pid); got != before+1 {
		t.Errorf("nice %d after +1 from %d", got, before)
	}
	if want := "process " + strconv.Itoa(pid) + " sleep: nice " + strconv.Itoa(before) + " → " + strconv.Itoa(before+1) + " (1 thread)"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	if os.Geteuid() == 0 {
		if _, err := Renice(Target{PID: pid, TID: pid}, -1); err != nil {
			t.Fatal(err)
		}
		if got := niceOf(t, pid, pid); got != before {
			t.Errorf("nice %d after -1, want %d back", got, before)
		}
	}
	if err := unix.Setpriority(unix.PRIO_PROCESS, pid, 19); err != nil {
		t.Fatal(err)
	}
	if msg, err := Renice(tg, +1); err != nil || !strings.Contains(msg, "already at nice 19") {
		t.Errorf("renice past 19: %q, %v; want it to say it is already at 19", msg, err)
	}
}

// TestActionsAsAnotherUserSayNotPermitted runs the actions from an
// unprivileged user on a root-owned process: each is refused with EPERM,
// said in words, and the process is untouched.
func TestActionsAsAnotherUserSayNotPermitted(t *testing.T) {
	if os.Getenv("PROCCTL_AS_NOBODY") != "" {
		pid, _ := strconv.Atoi(os.Getenv("PROCCTL_AS_NOBODY"))
		tg := Target{PID: pid}
		var errs []string
		for _, do := range []func() (string, error){
			func() (string, error) { return Send(tg, Signals[0]) },
			func() (string, error) { return SetAffinity(tg, []int{0}) },
			func() (string, error) { return Renice(tg, +1) },
		} {
			_, err := do()
			errs = append(errs, strings.ReplaceAll(err.Error(), strconv.Itoa(pid), "PID"))
		}
		os.Stdout.WriteString(strings.Join(errs, "\n") + "\n")
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a part of itself as another user")
	}
	cmd := startSleep(t)
	// The test binary's own directory is private to root: run a copy.
	dir, err := os.MkdirTemp("", "procctl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := dir + "/procctl.test"
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	child := exec.Command(bin, "-test.run=^TestActionsAsAnotherUserSayNotPermitted$")
	child.Dir = dir
	child.Env = append(os.Environ(), "PROCCTL_AS_NOBODY="+strconv.Itoa(cmd.Process.Pid))
	child.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := child.Output()
	if err != nil {
		t.Fatalf("the unprivileged part: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(out)), "PASS")), "\n")
	want := []string{
		"cannot send SIGTERM to process PID: not permitted (EPERM): another user's task needs root or CAP_KILL",
		"cannot set CPU affinity 0 for process PID: not permitted (EPERM): another user's task needs root or CAP_SYS_NICE",
		"cannot set nice 1 for process PID: not permitted (EPERM): lowering nice, or another user's task, needs root or CAP_SYS_NICE",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("refusals (-want +got):\n%s", diff)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the root-owned process is gone after refused actions: %v", err)
	}
}

func TestParseCPUs(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "0-1": "0-1", "0,2": "0,2", " 3,1,2 ": "1-3", "1,1,0": "0-1", "0-2,4,5": "0-2,4-5"} {
		cpus, err := ParseCPUs(in)
		if err != nil {
			t.Errorf("ParseCPUs(%q): %v", in, err)
			continue
		}
		if got := FormatCPUs(cpus); got != want {
			t.Errorf("ParseCPUs(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"", "a", "1-0", "-1", "0,,1", "99999"} {
		if _, err := ParseCPUs(in); err == nil {
			t.Errorf("ParseCPUs(%q) accepted junk", in)
		}
	}
}
