package selfprio

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestMain serves the test binary re-executed without privilege: it tries
// to raise its priority and prints what it got.
func TestMain(m *testing.M) {
	if os.Getenv("SELFPRIO_UNPRIVILEGED") == "1" {
		ok := Raise()
		fmt.Printf("%v %s\n", ok, niceSet())
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// nices reads the nice value (field 19 of stat) of every thread of this
// process.
func nices() (map[int]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/stat")
		if err != nil {
			continue // gone
		}
		// Fields after the name, which may hold spaces: state is field 3.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		n, err := strconv.Atoi(f[19-3])
		if err != nil {
			return nil, err
		}
		tid, _ := strconv.Atoi(e.Name())
		out[tid] = n
	}
	return out, nil
}

// niceSet is the distinct nice values of this process's threads.
func niceSet() string {
	n, err := nices()
	if err != nil {
		return err.Error()
	}
	seen := map[int]bool{}
	var s []string
	for _, v := range n {
		if !seen[v] {
			seen[v] = true
			s = append(s, strconv.Itoa(v))
		}
	}
	return strings.Join(s, ",")
}

// lockedThreads starts n goroutines each on an OS thread of its own, so the
// process has threads besides the one calling Raise.
func lockedThreads(n int) func() {
	stop := make(chan struct{})
	var tids []int
	for range n {
		ready := make(chan int)
		go func() {
			runtime.LockOSThread()
			ready <- unix.Gettid()
			<-stop
		}()
		tids = append(tids, <-ready)
	}
	// A goroutine that returns locked takes its thread with it, but the
	// thread leaves /proc/self/task a little later: beside CPU hogs one
	// was still listed when the next test began, and gone before that
	// test's walk reached it. Stopping waits until the kernel no longer
	// lists them; the main thread, which the runtime never ends, stays.
	return func() {
		close(stop)
		deadline := time.Now().Add(10 * time.Second)
		for _, tid := range tids {
			for tid != os.Getpid() {
				if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid)); os.IsNotExist(err) {
					break
				}
				if time.Now().After(deadline) {
					panic(fmt.Sprintf("locked thread %d still listed 10 s after its goroutine returned", tid))
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
}

// TestRaiseWithoutPrivilege: an unprivileged monitor keeps its default
// priority, silently.
func TestRaiseWithoutPrivilege(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "SELFPRIO_UNPRIVILEGED=1")
	if os.Geteuid() == 0 {
		// As root, the copy runs as nobody, which needs a binary it may
		// read and execute.
		dir := t.TempDir()
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Path = filepath.Join(dir, "selfprio.test")
		if err := os.WriteFile(cmd.Path, b, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		var lim unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_NICE, &lim) == nil && lim.Cur >= 40 {
			t.Skip("RLIMIT_NICE lets this user run at nice -20")
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if diff := cmp.Diff("false "+niceSet()+"\n", string(out)); diff != "" {
		t.Errorf("unprivileged raise (-want +got):\n%s", diff)
	}
}

// TestRaiseEveryThread: with the privilege every thread, those started
// before and after, runs at Nice; Restore, as a workload process calls it,
// puts them back.
func TestRaiseEveryThread(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SYS_NICE)")
	}
	t.Setenv(EnvBase, "") // restored by the test's end
	os.Unsetenv(EnvBase)
	stop := lockedThreads(3)
	defer stop()
	base := niceSet()
	if !Raise() {
		t.Fatal("Raise failed as root")
	}
	stop2 := lockedThreads(2)
	defer stop2()
	if diff := cmp.Diff(strconv.Itoa(Nice), niceSet()); diff != "" {
		t.Errorf("nice of every thread after Raise (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(base, os.Getenv(EnvBase)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", EnvBase, diff)
	}
	Restore()
	if diff := cmp.Diff(base, niceSet()); diff != "" {
		t.Errorf("nice of every thread after Restore (-want +got):\n%s", diff)
	}
}

// TestEachThread: every thread once; a thread gone (ESRCH) is skipped,
// any other error stops the walk.
func TestEachThread(t *testing.T) {
	stop := lockedThreads(3)
	defer stop()
	// Listed first: the runtime may start a thread during the walk, but
	// ends none here, so each of these must be walked.
	before, err := nices()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[int]int{}
	if err := EachThread(5, func(tid int) error { calls[tid]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for tid := range before {
		if calls[tid] != 1 {
			t.Errorf("thread %d: %d calls, want 1", tid, calls[tid])
		}
	}
	if len(before) < 4 {
		t.Errorf("%d threads, want at least the 3 started and this one", len(before))
	}
	if err := EachThread(5, func(int) error { return unix.ESRCH }); err != nil {
		t.Errorf("ESRCH: %v, want it skipped", err)
	}
	if err := EachThread(5, func(int) error { return unix.EPERM }); err != unix.EPERM {
		t.Errorf("EPERM: %v, want it returned", err)
	}
}
