package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestJVMPerfMapFlag: --jvm-perfmap asks a real JVM for a perf map and
// says so; without the flag nothing is asked, and the lines say what the
// stacks lack; a process that is no JVM gets one line saying so.
func TestJVMPerfMapFlag(t *testing.T) {
	classes := testutil.JavaClasses(t)
	j := testutil.StartJava(t, classes, nil, nil, "Spin")
	pid := j.Cmd.Process.Pid
	perfMap := fmt.Sprintf("/tmp/perf-%d.map", pid)
	os.Remove(perfMap)
	t.Cleanup(func() { os.Remove(perfMap) })
	p := fmt.Sprint(pid)

	_, stderr, err := runFor(t, time.Minute, "", "-b", "--stacks", "-p", p, "-n", "1", "-d", "0.2")
	if err != nil {
		t.Fatalf("without --jvm-perfmap: %v\n%s", err, stderr)
	}
	for _, want := range []string{
		"ctxtop: JVM " + p + ": no perf map, its JIT frames are unnamed (--jvm-perfmap asks it for one)\n",
		"ctxtop: JVM " + p + ": no -XX:+PreserveFramePointer, so Java stacks end in JIT code\n",
	} {
		if !strings.Contains(string(stderr), want) {
			t.Errorf("without --jvm-perfmap, stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(perfMap); err == nil {
		t.Errorf("without --jvm-perfmap, the JVM wrote a perf map: it was asked")
	}

	_, stderr, err = runFor(t, time.Minute, "", "-b", "--stacks", "--jvm-perfmap", "-p", p, "-n", "1", "-d", "0.2")
	if err != nil {
		t.Fatalf("--jvm-perfmap: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(perfMap)
	if err != nil {
		t.Fatalf("--jvm-perfmap: %v", err)
	}
	want := fmt.Sprintf("ctxtop: asked JVM %s for a perf map: %d methods\n", p, strings.Count(string(b), "\n"))
	if !strings.Contains(string(stderr), want) || strings.Contains(string(stderr), "no perf map") {
		t.Errorf("--jvm-perfmap: stderr lacks %q, or still says there is no perf map:\n%s", want, stderr)
	}
	if !strings.Contains(string(b), "Spin.work(long)") {
		t.Errorf("the perf map does not name Spin.work")
	}

	// record too, asked to.
	os.Remove(perfMap)
	rec := filepath.Join(t.TempDir(), "rec")
	_, stderr, err = runFor(t, time.Minute, "", "record", "--stacks", "--jvm-perfmap", "-p", p, "-o", rec, "-d", "0.2", "--duration", "0.4")
	if err != nil {
		t.Fatalf("record --jvm-perfmap: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(perfMap); err != nil || !strings.Contains(string(stderr), "ctxtop: asked JVM "+p+" for a perf map: ") {
		t.Errorf("record --jvm-perfmap: perf map %v, stderr:\n%s", err, stderr)
	}

	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleep.Process.Kill(); sleep.Wait() })
	_, stderr, err = runFor(t, time.Minute, "", "-b", "--stacks", "--jvm-perfmap", "-p", fmt.Sprint(sleep.Process.Pid), "-n", "1", "-d", "0.2")
	want = fmt.Sprintf("ctxtop: --jvm-perfmap: process %d (sleep): not a HotSpot JVM (no libjvm.so mapped)\n", sleep.Process.Pid)
	if err != nil || !strings.Contains(string(stderr), want) {
		t.Errorf("a process that is no JVM: %v, stderr lacks %q:\n%s", err, want, stderr)
	}

	// A PID that exited: the one line every -p gets, nothing about JVMs.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = runFor(t, time.Minute, "", "-b", "--stacks", "--jvm-perfmap", "-p", fmt.Sprint(gone.Process.Pid), "-n", "1")
	if err == nil || !oneLine(stderr, "no such process") {
		t.Errorf("a PID that exited: %v, want a failure and one line:\n%s", err, stderr)
	}

	for _, args := range [][]string{{"-b", "--jvm-perfmap", "-p", p}, {"-b", "--stacks", "--jvm-perfmap"}} {
		_, stderr, err := runFor(t, time.Minute, "", append(args, "-n", "1")...)
		if err == nil || !oneLine(stderr, "--jvm-perfmap asks the -p processes") {
			t.Errorf("ctxtop %s: %v, want one line and a failure:\n%s", strings.Join(args, " "), err, stderr)
		}
	}
}

// javaStack is what the test reads of a JSON stack.
type javaStack struct {
	Frames    []string `json:"frames"`
	Own       string   `json:"own"`
	Truncated string   `json:"truncated"`
	Share     float64  `json:"share"`
}

// javaThread is what the test reads of a JSON thread row.
type javaThread struct {
	Comm string `json:"comm"`
	Why  struct {
		Own string `json:"own_frame"`
	} `json:"why"`
	BlockedAt []javaStack `json:"blocked_at"`
	WokenFrom []javaStack `json:"woken_from"`
}

// javaThreads runs ctxtop -b --stacks --jvm-perfmap -p pid -o json and
// returns the ping and pong threads of its last report, with stderr.
func javaThreads(t *testing.T, pid int) (map[string]javaThread, string) {
	t.Helper()
	stdout, stderr, err := runFor(t, 2*time.Minute, "", "-b", "--stacks", "--jvm-perfmap", "-p", fmt.Sprint(pid), "-o", "json", "-n", "4", "-d", "1")
	if err != nil {
		t.Fatalf("ctxtop: %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	var r struct {
		Threads []javaThread `json:"threads"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("the last report: %v", err)
	}
	out := map[string]javaThread{}
	for _, th := range r.Threads {
		if th.Comm == "ping" || th.Comm == "pong" {
			out[th.Comm] = th
		}
	}
	if len(out) != 2 {
		t.Fatalf("the last report has %d of the threads ping and pong:\n%s", len(out), lines[len(lines)-1])
	}
	return out, string(stderr)
}

func hasFrames(s []javaStack, names ...string) bool {
	if len(s) == 0 {
		return false
	}
	joined := "\x00" + strings.Join(s[0].Frames, "\x00") + "\x00"
	for _, n := range names {
		if !strings.Contains(joined, "\x00"+n+"\x00") {
			return false
		}
	}
	return true
}

// TestJavaPingPongStacks: two Java threads waking each other with
// LockSupport.park and unpark, the classic experiment. Run with
// -XX:+PreserveFramePointer and a perf map asked for with --jvm-perfmap,
// each thread's main "blocked at" stack goes from the futex through
// libc and libjvm into LockSupport.park and the thread's run method, its
// "woken from" through LockSupport.unpark, and WHY names run. Without
// the flag the stacks end in JIT code and stderr says why. LockSupport's
// methods are kept from being inlined: a perf map names compiled units,
// and C2 would otherwise fold park into run (see docs/stacks.md).
func TestJavaPingPongStacks(t *testing.T) {
	needStacks(t)
	classes := testutil.JavaClasses(t)
	noInline := []string{"-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,java.util.concurrent.locks.LockSupport::*"}
	const (
		park   = "java.util.concurrent.locks.LockSupport.park"
		unpark = "java.util.concurrent.locks.LockSupport.unpark"
		run    = "PingPong$Player.run"
	)
	t.Run("frame pointers", func(t *testing.T) {
		j := testutil.StartJava(t, classes, nil, nil, "PingPong", append(noInline, "-XX:+PreserveFramePointer")...)
		pid := j.Cmd.Process.Pid
		t.Cleanup(func() { os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid)) })
		waitTrips(t, j)
		threads, stderr := javaThreads(t, pid)
		if !strings.Contains(stderr, fmt.Sprintf("ctxtop: asked JVM %d for a perf map: ", pid)) || strings.Contains(stderr, "PreserveFramePointer") {
			t.Errorf("stderr:\n%s", stderr)
		}
		for name, th := range threads {
			if !hasFrames(th.BlockedAt, park, run) {
				t.Errorf("%s: blocked at lacks %s and %s: %+v", name, park, run, th.BlockedAt)
			}
			if !hasFrames(th.WokenFrom, unpark, run) {
				t.Errorf("%s: woken from lacks %s and %s: %+v", name, unpark, run, th.WokenFrom)
			}
			if th.Why.Own != run {
				t.Errorf("%s: WHY names %q, want %q", name, th.Why.Own, run)
			}
		}
	})
	t.Run("no frame pointers", func(t *testing.T) {
		j := testutil.StartJava(t, classes, nil, nil, "PingPong", noInline...)
		pid := j.Cmd.Process.Pid
		t.Cleanup(func() { os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid)) })
		waitTrips(t, j)
		threads, stderr := javaThreads(t, pid)
		if want := fmt.Sprintf("ctxtop: JVM %d: no -XX:+PreserveFramePointer, so Java stacks end in JIT code\n", pid); !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
		for name, th := range threads {
			if len(th.BlockedAt) == 0 || hasFrames(th.BlockedAt, run) || th.BlockedAt[0].Truncated == "" {
				t.Errorf("%s: blocked at %+v, want a stack cut short before %s", name, th.BlockedAt, run)
			}
		}
	})
}

// waitTrips waits for the ping-pong's second count of round trips: by
// then its hot methods are compiled, and in the perf map asked for next.
func waitTrips(t *testing.T, j *testutil.Java) {
	t.Helper()
	for i := 0; i < 2; i++ {
		if line, err := j.Out.ReadString('\n'); err != nil || !strings.HasPrefix(line, "trips ") {
			t.Fatalf("the ping-pong: %q %v", line, err)
		}
	}
}
