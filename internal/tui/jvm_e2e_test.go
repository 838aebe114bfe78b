package tui_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestJVMDetailInTmux opens the detail view of a real Java ping-pong
// thread (run with -XX:+PreserveFramePointer, no perf map): the view says
// its JIT frames are unnamed and that J asks for a perf map; J does, the
// footer says how many methods came, and within a few refreshes "blocked
// at" and "woken from" name LockSupport.park and unpark: stacks resolved
// before the map are named again, not kept with bare addresses.
func TestJVMDetailInTmux(t *testing.T) {
	needTmuxAndStacks(t)
	bin := testutil.Binary(t)
	classes := testutil.JavaClasses(t)
	j := testutil.StartJava(t, classes, nil, nil, "PingPong", "-XX:+PreserveFramePointer",
		"-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,java.util.concurrent.locks.LockSupport::*")
	pid := j.Cmd.Process.Pid
	perfMap := fmt.Sprintf("/tmp/perf-%d.map", pid)
	t.Cleanup(func() { os.Remove(perfMap) })

	x := startTmux(t, "jvm", 120, 32, fmt.Sprintf("%s -d 0.5 -p %d", bin, pid))
	x.waitFor("the table", contains("ping", "TOTAL/s"))
	x.run("send-keys", "-t", "e2e", "/", "ping", "Enter")
	x.waitFor("the filter", contains("/ping"))
	x.run("send-keys", "-t", "e2e", "Enter")
	p := x.waitFor("the JVM's note", contains("blocked at", fmt.Sprintf("JVM %d: no perf map, its JIT frames are unnamed (J asks it for one)", pid)))
	if strings.Contains(p, "PreserveFramePointer") {
		t.Errorf("the JVM keeps frame pointers, yet the view says it does not:\n%s", p)
	}
	if _, err := os.Stat(perfMap); err == nil {
		t.Fatalf("a perf map before J: the JVM was asked without it")
	}
	x.run("send-keys", "-t", "e2e", "J")
	x.waitFor("the footer", contains(fmt.Sprintf("asked JVM %d for a perf map: ", pid)))
	asked := time.Now()
	x.waitFor("the Java frames named", func(p string) bool {
		return stackShare(p, "blocked at", "LockSupport.park ← PingPong$Player.run") > 0 &&
			stackShare(p, "woken from", "LockSupport.unpark ← PingPong$Player.run") > 0
	})
	// The next refresh resolves the stacks again (0.5 s, more on a busy
	// host); stacks kept from before would keep their bare addresses.
	d := time.Since(asked)
	t.Logf("the Java frames were named %v after the perf map", d.Round(time.Millisecond))
	if d > 3*time.Second {
		t.Errorf("the Java frames were named %v after the perf map, want within 3 s (6 refreshes)", d.Round(time.Millisecond))
	}
	p = x.waitFor("the named stacks most of the window", func(p string) bool {
		return stackShare(p, "blocked at", "LockSupport.park ← PingPong$Player.run") > 50 &&
			stackShare(p, "woken from", "LockSupport.unpark ← PingPong$Player.run") > 50
	})
	if strings.Contains(p, "no perf map") {
		t.Errorf("the note outlived the perf map:\n%s", p)
	}
	checkFits(t, p, 120, 32)
}
