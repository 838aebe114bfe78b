package cli_test

import (
	"fmt"
	"os"
	"os/exec"
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
		"ctxtop: JVM " + p + ": no -XX:+PreserveFramePointer, Java frames stop at the first JIT frame\n",
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

	for _, args := range [][]string{{"-b", "--jvm-perfmap", "-p", p}, {"-b", "--stacks", "--jvm-perfmap"}} {
		_, stderr, err := runFor(t, time.Minute, "", append(args, "-n", "1")...)
		if err == nil || !oneLine(stderr, "--jvm-perfmap asks the -p processes") {
			t.Errorf("ctxtop %s: %v, want one line and a failure:\n%s", strings.Join(args, " "), err, stderr)
		}
	}
}
