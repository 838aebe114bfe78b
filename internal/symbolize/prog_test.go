package symbolize

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests below build real programs with the installed compilers, run
// them, and symbolize addresses the programs report about themselves.
// Each program prints "KEY VALUE" lines and then "ready", and exits when
// its standard input closes.

// build compiles src (written to dir/name.ext) with the command given and
// returns the binary's path.
func build(t *testing.T, dir, name, ext, src string, cmd ...string) string {
	t.Helper()
	if _, err := exec.LookPath(cmd[0]); err != nil {
		t.Fatalf("%s is not installed; the test builds real programs with it: %v", cmd[0], err)
	}
	srcPath := filepath.Join(dir, name+ext)
	if err := os.WriteFile(srcPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	c := exec.Command(cmd[0], append(cmd[1:], "-o", out, srcPath)...)
	c.Dir = dir
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, b)
	}
	return out
}

// prog is a running test program.
type prog struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	vals  map[string]string
}

// start runs argv and reads its "KEY VALUE" lines up to "ready".
func start(t *testing.T, argv ...string) *prog {
	t.Helper()
	p := &prog{cmd: exec.Command(argv[0], argv[1:]...), vals: map[string]string{}}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stdin.Close()
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	})
	p.out = bufio.NewReader(stdout)
	p.readUntil(t, "ready")
	return p
}

// readUntil reads "KEY VALUE" lines into vals until the line want.
func (p *prog) readUntil(t *testing.T, want string) {
	t.Helper()
	type line struct {
		s   string
		err error
	}
	for {
		ch := make(chan line, 1)
		go func() { s, err := p.out.ReadString('\n'); ch <- line{s, err} }()
		var l line
		select {
		case l = <-ch:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no %q line within 30 s", p.cmd.Path, want)
		}
		if l.err != nil {
			t.Fatalf("%s: reading its output: %v", p.cmd.Path, l.err)
		}
		s := strings.TrimSpace(l.s)
		if s == want {
			return
		}
		k, v, _ := strings.Cut(s, " ")
		p.vals[k] = v
	}
}

// addr is the address the program printed under key ("0x55d0c5c2a139").
func (p *prog) addr(t *testing.T, key string) uint64 {
	t.Helper()
	v, ok := p.vals[key]
	if !ok {
		t.Fatalf("the program printed no %q", key)
	}
	a, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return a
}

func (p *prog) pid() int { return p.cmd.Process.Pid }

// nmAddr is the address `nm` gives the symbol in path.
func nmAddr(t *testing.T, path, symbol string) uint64 {
	t.Helper()
	out, err := exec.Command("nm", path).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", path, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == symbol {
			a, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return a
		}
	}
	t.Fatalf("nm %s lists no %s", path, symbol)
	return 0
}

var readelfBuildID = regexp.MustCompile(`Build ID: ([0-9a-f]+)`)

// buildID is the GNU build id `readelf -n` prints for path.
func buildID(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("readelf", "-n", path).Output()
	if err != nil {
		t.Fatalf("readelf -n %s: %v", path, err)
	}
	m := readelfBuildID.FindSubmatch(out)
	if m == nil {
		t.Fatalf("readelf -n %s shows no build id", path)
	}
	return string(m[1])
}

func newSymbolizer(t testing.TB, opt Options) *Symbolizer {
	t.Helper()
	if opt.Proc == "" {
		opt.Proc = "/proc"
	}
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func symbolizeUser(t *testing.T, s *Symbolizer, pid int, mode Addressing, addrs ...uint64) []Frame {
	t.Helper()
	frames, err := s.User(pid, addrs, mode)
	if err != nil {
		t.Fatalf("User(%d, %#x): %v", pid, addrs, err)
	}
	return frames
}

// waitSyscall waits until pid's main thread is blocked in system call nr
// and returns its user instruction pointer, the last field of
// /proc/PID/syscall.
func waitSyscall(t *testing.T, pid, nr int) uint64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/syscall", pid))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b))
		if len(f) == 9 && f[0] == strconv.Itoa(nr) {
			pc, err := strconv.ParseUint(strings.TrimPrefix(f[8], "0x"), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return pc
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never blocked in system call %d", pid, nr)
	return 0
}

// mappedPath is the path of the first mapping of pid whose path contains sub.
func mappedPath(t *testing.T, pid int, sub string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, "/"); i >= 0 && strings.Contains(line[i:], sub) {
			return line[i:]
		}
	}
	t.Fatalf("process %d maps nothing named %q", pid, sub)
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }

func fmtSscan(s string, v ...any) (int, error) { return fmt.Sscan(s, v...) }

func parseHexT(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
