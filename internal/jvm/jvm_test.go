package jvm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

const timeout = 10 * time.Second // a JVM on a loaded host is slow to start its listener

func TestParseStatus(t *testing.T) {
	status := "Name:\tjava\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t7\nNSpid:\t4242\t7\n" +
		"Uid:\t1000\t65534\t65534\t65534\nGid:\t1001\t65533\t65533\t65533\n" +
		"SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\nSigCgt:\t2000000181005ccf\n"
	got, err := parseStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	want := &Process{NSPID: 7, UID: 65534, GID: 65533, CatchesQuit: true, Comm: "java"}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Process{})); diff != "" {
		t.Errorf("parseStatus (-want +got):\n%s", diff)
	}
	got, err = parseStatus([]byte(strings.Replace(status, "2000000181005ccf", "0000000000000001", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got.CatchesQuit {
		t.Errorf("SigCgt without bit 3: CatchesQuit = true")
	}
	for _, bad := range []string{"", "Name:\tx\n", "Uid:\t0\nGid:\t0\t0\n", "Uid:\tx\tx\nGid:\t0\t0\n"} {
		if _, err := parseStatus([]byte(bad)); err == nil {
			t.Errorf("parseStatus(%q): no error", bad)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add([]byte("Name:\tjava\nNSpid:\t1\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nSigCgt:\tffff\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseStatus(b)
		if err == nil && p == nil {
			t.Errorf("parseStatus: nil Process and no error")
		}
	})
}

// TestNotJVMOrGone: a process without libjvm.so and a PID that exited
// get one line each, naming the PID.
func TestNotJVMOrGone(t *testing.T) {
	if notes, has := Notes("/proc", os.Getpid()); notes != nil || has {
		t.Errorf("Notes(self) = %q, %v; want none", notes, has)
	}
	_, err := Inspect("/proc", os.Getpid())
	if !errors.Is(err, ErrNotJVM) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("Inspect(self) = %v, want one line with the PID and %v", err, ErrNotJVM)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	_, err = Inspect("/proc", pid)
	if !errors.Is(err, ErrGone) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), strconv.Itoa(pid)) {
		t.Errorf("Inspect(exited %d) = %v, want one line with the PID and %v", pid, err, ErrGone)
	}
}

// TestPerfMap asks real JVMs for a perf map and their flags through the
// attach mechanism: one run as the test's user with
// -XX:+PreserveFramePointer, one as nobody (when the test runs as root:
// the attach then comes from a thread with nobody's credentials, the file
// goes to /tmp since its working directory is not nobody's to write), and
// one in its own PID and mount namespaces with a private /tmp, as in a
// container.
func TestPerfMap(t *testing.T) {
	classes := testutil.JavaClasses(t)
	cases := []struct {
		name    string
		root    bool
		cred    *syscall.Credential
		wrap    []string
		args    []string
		keepsFP bool
	}{
		{name: "own user", args: []string{"-XX:+PreserveFramePointer"}, keepsFP: true},
		{name: "nobody", root: true, cred: &syscall.Credential{Uid: 65534, Gid: 65534}},
		{name: "container", root: true, wrap: []string{"unshare", "--pid", "--fork", "--kill-child", "--mount", "--propagation", "private",
			"sh", "-c", `mount -t tmpfs tmpfs /tmp && mkdir /tmp/c && cp ./*.class /tmp/c && cd /tmp/c && exec "$@"`, "sh"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				t.Skip("needs root")
			}
			j := testutil.StartJava(t, classes, c.cred, c.wrap, "Spin", c.args...)
			pid := j.Cmd.Process.Pid
			if c.wrap != nil {
				pid = childOf(t, pid)
			}
			p, err := Inspect("/proc", pid)
			if err != nil {
				t.Fatal(err)
			}
			if c.wrap != nil && p.NSPID == pid {
				t.Fatalf("the JVM sees itself as PID %d, as the host does: no PID namespace", pid)
			}
			perfMap := fmt.Sprintf("/proc/%d/root/tmp/perf-%d.map", pid, p.NSPID)
			t.Cleanup(func() { os.Remove(perfMap) })
			wantNotes := []string{fmt.Sprintf("JVM %d: no perf map, its JIT frames are unnamed", pid)}
			if !c.keepsFP {
				wantNotes = append(wantNotes, fmt.Sprintf("JVM %d: no -XX:+PreserveFramePointer, so Java stacks end in JIT code", pid))
			}
			notes, has := Notes("/proc", pid)
			if diff := cmp.Diff(wantNotes, notes); diff != "" || has {
				t.Errorf("Notes before a perf map: perf map %v, (-want +got):\n%s", has, diff)
			}
			n, err := p.PerfMap(timeout)
			if err != nil {
				t.Fatalf("PerfMap: %v", err)
			}
			b, err := os.ReadFile(perfMap)
			if err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(string(b), "\n"); n != lines || n < 10 {
				t.Errorf("PerfMap = %d methods, the file has %d lines; want the same, at least 10", n, lines)
			}
			if !strings.Contains(string(b), " Spin.work(long)") {
				t.Errorf("the perf map does not name Spin.work:\n%.2000s", b)
			}
			notes, has = Notes("/proc", pid)
			if diff := cmp.Diff(wantNotes[1:], notes, cmpopts.EquateEmpty()); diff != "" || !has {
				t.Errorf("Notes after a perf map: perf map %v, (-want +got):\n%s", has, diff)
			}
			flags, err := p.Flags(timeout)
			if err != nil {
				t.Fatalf("Flags: %v", err)
			}
			if !strings.Contains(flags, "-XX:MaxHeapSize=") {
				t.Errorf("VM.flags answered %q, no MaxHeapSize", flags)
			}
			if got := PreservesFramePointer(flags); got != c.keepsFP {
				t.Errorf("PreservesFramePointer(VM.flags) = %v, want %v", got, c.keepsFP)
			}
			if got, err := PreserveFramePointerFromCmdline("/proc", pid); err != nil || got != c.keepsFP {
				t.Errorf("PreserveFramePointerFromCmdline = %v, %v; want %v", got, err, c.keepsFP)
			}
			_, err = p.Command("No.such.command", timeout)
			if err == nil || !strings.Contains(err.Error(), "failed") || strings.Contains(err.Error(), "\n") {
				t.Errorf("an unknown command: %v, want one line saying it failed", err)
			}
			for _, dir := range []string{fmt.Sprintf("/proc/%d/cwd", pid), fmt.Sprintf("/proc/%d/root/tmp", pid)} {
				if _, err := os.Lstat(filepath.Join(dir, fmt.Sprintf(".attach_pid%d", p.NSPID))); err == nil {
					t.Errorf("the trigger file is left in %s", dir)
				}
			}
			if c.cred != nil {
				checkOwnCredentials(t)
			}
		})
	}
}

// TestLeftovers: an earlier process's perf map is not taken for the
// JVM's. A socket left in /tmp by an earlier process with the JVM's PID (one ended by SIGKILL leaves it) stops a JVM of another
// user from listening, since the sticky /tmp refuses HotSpot's rename over
// it. ctxtop says so at once, naming the file, rather than signalling and
// waiting out its timeout; it leaves the file alone. A leftover of the
// JVM's own user is replaced by the JVM, and the attach works.
func TestLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the JVM runs as nobody and the leftover is root's")
	}
	classes := testutil.JavaClasses(t)
	j := testutil.StartJava(t, classes, &syscall.Credential{Uid: 65534, Gid: 65534}, nil, "Spin")
	pid := j.Cmd.Process.Pid
	p, err := Inspect("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	sock := fmt.Sprintf("/tmp/.java_pid%d", pid)
	if _, err := os.Lstat(sock); err == nil {
		t.Fatalf("%s exists before the test made it", sock)
	}
	t.Cleanup(func() { os.Remove(sock) })
	perfMap := fmt.Sprintf("/tmp/perf-%d.map", pid)
	t.Cleanup(func() { os.Remove(perfMap) })

	// An earlier process's perf map: not taken for this JVM's.
	if err := os.WriteFile(perfMap, []byte("1000 10 Other.program()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(perfMap, hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	notes, has := Notes("/proc", pid)
	if has || len(notes) == 0 || !strings.Contains(notes[0], "its perf map predates it") {
		t.Errorf("Notes beside an earlier process's perf map: perf map %v, %q; want none, and the file named as older", has, notes)
	}
	if err := os.Remove(perfMap); err != nil {
		t.Fatal(err)
	}
	leave := func(uid int) {
		t.Helper()
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
			t.Fatal(err)
		}
		syscall.Close(fd) // nobody listens on it any more: a leftover
		if err := os.Lchown(sock, uid, uid); err != nil {
			t.Fatal(err)
		}
	}

	leave(0)
	_, err = p.PerfMap(timeout)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), sock[len("/tmp/"):]) ||
		!strings.Contains(err.Error(), "uid 0's") || !strings.Contains(err.Error(), "remove") {
		t.Fatalf("PerfMap beside root's leftover %s: %v; want one line naming it, its owner and what to do", sock, err)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(sock, &st); err != nil || st.Uid != 0 || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		t.Errorf("the leftover was touched: %+v, %v", st, err)
	}

	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	leave(65534)
	n, err := p.PerfMap(timeout)
	if err != nil || n < 10 {
		t.Fatalf("PerfMap beside the JVM's own user's leftover = %d, %v; want the JVM to replace it and answer", n, err)
	}
	if _, has := Notes("/proc", pid); !has {
		t.Errorf("Notes after the JVM wrote its perf map: none seen")
	}
}

// checkOwnCredentials fails unless every thread of the test process has
// the process's effective user again: the thread that took a JVM's must
// have ended, not gone back to run other goroutines.
func checkOwnCredentials(t *testing.T) {
	t.Helper()
	want := fmt.Sprintf("Uid:\t%d\t%d\t", os.Getuid(), os.Geteuid())
	var bad []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		bad = bad[:0]
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
			if err != nil {
				continue // ended meanwhile
			}
			if !strings.Contains(string(b), want) {
				bad = append(bad, task.Name()+": "+strings.Join(strings.Split(string(b), "\n")[:9], "|"))
			}
		}
		if len(bad) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(bad) > 0 {
		t.Errorf("threads %v of the test process still run with other credentials", bad)
	}
}

// TestPreserveFramePointerFromCmdline reads the flag from real processes'
// command lines and environments, in HotSpot's order.
func TestPreserveFramePointerFromCmdline(t *testing.T) {
	for _, c := range []struct {
		arg, tool, jdk, late string
		want                 bool
	}{
		{arg: "-Xmx1g", jdk: "-XX:+PreserveFramePointer", want: true},
		{arg: "-XX:-PreserveFramePointer", jdk: "-XX:+PreserveFramePointer", want: false},
		{arg: "-Xmx1g", tool: "-XX:+PreserveFramePointer", jdk: "-XX:-PreserveFramePointer", want: false},
		{arg: "-Xmx1g", want: false},
		{arg: "-XX:+PreserveFramePointer", want: true},
		{arg: "-XX:-PreserveFramePointer", tool: "-XX:+PreserveFramePointer", want: false},
		{arg: "-Xmx1g", tool: "-Xss1m -XX:+PreserveFramePointer", want: true},
		{arg: "-XX:+PreserveFramePointer", late: "-XX:-PreserveFramePointer", want: false},
	} {
		// sh takes the argument as its $0 and sleeps: a process whose
		// command line holds it.
		cmd := exec.Command("sh", "-c", "sleep 60", c.arg)
		cmd.Env = []string{"JAVA_TOOL_OPTIONS=" + c.tool, "JDK_JAVA_OPTIONS=" + c.jdk, "_JAVA_OPTIONS=" + c.late}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Until the child has exec'd sh, its command line and environment
		// are still the test's own: wait for sh's, or a busy host reads
		// those.
		execd(t, cmd.Process.Pid, "sh\x00-c\x00sleep 60\x00")
		got, err := PreserveFramePointerFromCmdline("/proc", cmd.Process.Pid)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if err != nil || got != c.want {
			t.Errorf("%+v: got %v, %v; want %v", c, got, err, c.want)
		}
	}
}

// execd waits until process pid's command line begins with prefix: the
// exec a Start began has happened.
func execd(t *testing.T, pid int, prefix string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.HasPrefix(string(b), prefix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not exec within 10 s: command line %q, %v", pid, b, err)
		}
	}
}

// childOf waits for the single child of pid and returns it.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b)); len(f) == 1 {
			c, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	t.Fatalf("process %d has no single child", pid)
	return 0
}
