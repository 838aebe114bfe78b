package symbolize

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// jitProg does what a JIT does: maps anonymous executable memory and names
// the code it puts there in /tmp/perf-PID.map, with its own idea of PID.
const jitProg = `
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void) {
	char *code = mmap(NULL, 1 << 16, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx 100 Lcom/example/Pool;::get\n", (unsigned long)code);
	fprintf(f, "%lx 40 LazyCompile:*handler app.js:10\n", (unsigned long)code + 0x100);
	fclose(f);
	printf("code %p\nnspid %d\nready\n", (void *)code, getpid());
	fflush(stdout);
	char b;
	while (read(0, &b, 1) == 1) {
		/* Compile one more function, as a JIT keeps doing. */
		f = fopen(path, "a");
		fprintf(f, "%lx 20 late_function\n", (unsigned long)code + 0x1000);
		fclose(f);
		printf("ready\n");
		fflush(stdout);
	}
	unlink(path);
	return 0;
}
`

func checkJIT(t *testing.T, s *Symbolizer, pid int, code uint64, mapName string) {
	t.Helper()
	frames := symbolizeUser(t, s, pid, StackAddresses, code+0x10, code+0x111, code+0x200)
	want := []Frame{
		{Addr: code + 0x10, Kind: JIT, Function: "Lcom/example/Pool;::get", Offset: 0x10, Object: mapName, ObjectAddr: code + 0x10},
		{Addr: code + 0x111, Kind: JIT, Function: "LazyCompile:*handler app.js:10", Offset: 0x11, Object: mapName, ObjectAddr: code + 0x111},
		{Addr: code + 0x200, Kind: User, ObjectAddr: code + 0x200}, // in the anonymous mapping, named by nothing
	}
	for i := range want {
		if frames[i] != want[i] {
			t.Errorf("frame %d = %#v, want %#v", i, frames[i], want[i])
		}
	}
}

func TestPerfMap(t *testing.T) {
	bin := build(t, t.TempDir(), "jit", ".c", jitProg, cFlags...)
	p := start(t, bin)
	if p.vals["nspid"] != strconv.Itoa(p.pid()) {
		t.Fatalf("the program sees itself as %s, not %d", p.vals["nspid"], p.pid())
	}
	t.Cleanup(func() { os.Remove(fmt.Sprintf("/tmp/perf-%d.map", p.pid())) })
	s := newSymbolizer(t, Options{MinRefresh: time.Nanosecond})
	code := p.addr(t, "code")
	checkJIT(t, s, p.pid(), code, fmt.Sprintf("perf-%d.map", p.pid()))

	if _, err := p.stdin.Write([]byte{'x'}); err != nil {
		t.Fatal(err)
	}
	p.readUntil(t, "ready")
	if f := symbolizeUser(t, s, p.pid(), ExactAddresses, code+0x1008)[0]; f.Function != "late_function" || f.Offset != 8 {
		t.Errorf("a function appended to the perf map: %#v, want late_function+8", f)
	}
	if got := s.Stats().PerfMapEntries; got != 3 {
		t.Errorf("Stats().PerfMapEntries = %d, want 3", got)
	}
}

// TestStalePerfMap: a perf map last written before its process started
// is an earlier holder of the PID's, left behind (a JIT ended by SIGKILL
// does not remove it, and PIDs wrap). Its names are not used, so no frame
// is named after another program's code; once rewritten, they are.
func TestStalePerfMap(t *testing.T) {
	bin := build(t, t.TempDir(), "jit", ".c", jitProg, cFlags...)
	p := start(t, bin)
	path := fmt.Sprintf("/tmp/perf-%d.map", p.pid())
	t.Cleanup(func() { os.Remove(path) })
	started, err := procfs.Started("/proc", p.pid())
	if err != nil {
		t.Fatal(err)
	}
	// 30 ms before the start: more than Predates' two ticks.
	if err := os.Chtimes(path, started.Add(-30*time.Millisecond), started.Add(-30*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	s := newSymbolizer(t, Options{MinRefresh: time.Nanosecond})
	code := p.addr(t, "code")
	if f := symbolizeUser(t, s, p.pid(), ExactAddresses, code+0x10)[0]; f.Kind == JIT || f.Function != "" {
		t.Errorf("a frame named from a perf map older than its process: %#v", f)
	}
	if got := s.Stats().PerfMapEntries; got != 0 {
		t.Errorf("Stats().PerfMapEntries = %d from a stale perf map, want 0", got)
	}
	now := time.Now()
	if err := os.Chtimes(path, now, now); err != nil {
		t.Fatal(err)
	}
	checkJIT(t, s, p.pid(), code, fmt.Sprintf("perf-%d.map", p.pid()))
}

// TestPerfMapInContainer runs the JIT in its own PID and mount namespaces
// with a private /tmp, as in a container: it is PID 1 there, writes
// /tmp/perf-1.map into a /tmp the host never sees, and runs from a copy
// of itself in that /tmp. Its perf map and its executable are found
// through /proc/PID/root.
func TestPerfMapInContainer(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create PID and mount namespaces")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatalf("unshare (util-linux) is not installed: %v", err)
	}
	bin := build(t, t.TempDir(), "jit", ".c", jitProg, cFlags...)
	// The shell keeps the binary open across the mount that hides it.
	script := `exec 3<"$1" && mount -t tmpfs tmpfs /tmp && cat <&3 >/tmp/jit && exec 3<&- && chmod +x /tmp/jit && exec /tmp/jit`
	p := start(t, "unshare", "--pid", "--fork", "--mount", "--propagation", "private", "sh", "-c", script, "sh", bin)
	if p.vals["nspid"] != "1" {
		t.Fatalf("the program sees itself as PID %s, want 1", p.vals["nspid"])
	}
	pid := childOf(t, p.pid())
	if _, err := os.Stat(fmt.Sprintf("/tmp/perf-%d.map", pid)); err == nil {
		t.Fatalf("a perf map for %d is on the host's /tmp: the test would not tell the roots apart", pid)
	}
	s := newSymbolizer(t, Options{})
	s.noMapFiles = true // open the executable through /proc/PID/root too
	checkJIT(t, s, pid, p.addr(t, "code"), "perf-1.map")
	id := buildID(t, bin)
	var main uint64
	for _, line := range strings.Split(readFile(t, fmt.Sprintf("/proc/%d/maps", pid)), "\n") {
		if strings.HasSuffix(line, " /tmp/jit") && strings.Contains(line, "r-xp") {
			main = parseHexT(t, line[:strings.IndexByte(line, '-')])
		}
	}
	if main == 0 {
		t.Fatalf("no executable mapping of /tmp/jit in process %d", pid)
	}
	if f := symbolizeUser(t, s, pid, ExactAddresses, main)[0]; f.Object != "jit" || f.BuildID != id || f.Function == "" {
		t.Errorf("the container's executable: %#v, want a named function in jit with build id %s", f, id)
	}
}

// childOf waits for the single child of pid and returns it.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		f := strings.Fields(readFile(t, fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)))
		if len(f) == 1 {
			c, err := strconv.Atoi(f[0])
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d has no single child", pid)
	return 0
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
