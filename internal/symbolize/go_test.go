package symbolize

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goProg prints its own stack from runtime.Callers with the names the Go
// runtime gives each frame, and the entry addresses of two functions with
// runtime.FuncForPC's names: the runtime's own symbolization is the oracle.
const goProg = `package main

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"runtime"
)

type pool struct{ in *bufio.Reader }

//go:noinline
func (p *pool) Get() byte { return consumerWait(p) }

//go:noinline
func consumerWait(p *pool) byte {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(1, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for i := 0; ; i++ {
		f, more := frames.Next()
		fmt.Printf("stack%d %#x %s\n", i, pcs[i], f.Function)
		if !more {
			fmt.Printf("depth %d %d\n", i+1, n)
			break
		}
	}
	for _, f := range []any{consumerWait, (*pool).Get} {
		pc := reflect.ValueOf(f).Pointer()
		fmt.Printf("func %#x %s\n", pc, runtime.FuncForPC(pc).Name())
	}
	fmt.Println("ready")
	b, _ := p.in.ReadByte()
	return b
}

func main() {
	p := &pool{in: bufio.NewReader(os.Stdin)}
	os.Exit(int(p.Get()))
}
`

func TestGoProgram(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("go is not installed: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module goprog\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(goProg), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"exe", nil},
		{"exe-stripped", []string{"-ldflags=-s -w"}},
		{"pie", []string{"-buildmode=pie"}},
		{"pie-stripped", []string{"-buildmode=pie", "-ldflags=-s -w"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := filepath.Join(dir, c.name)
			cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, c.flags...), ".")...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build %v: %v\n%s", c.flags, err, out)
			}
			if strings.HasSuffix(c.name, "stripped") {
				if out, _ := exec.Command("nm", bin).CombinedOutput(); !strings.Contains(string(out), "no symbols") {
					t.Fatalf("%s still has a symbol table:\n%.200s", c.name, out)
				}
			}
			p := start(t, bin)
			s := newSymbolizer(t, Options{})

			var depth, n int
			if _, err := fmtSscan(p.vals["depth"], &depth, &n); err != nil || depth != n || n < 5 {
				t.Fatalf("depth line %q: want as many frames as PCs, at least 5 (inlining would break the 1:1)", p.vals["depth"])
			}
			var pcs []uint64
			var want []string
			for i := range n {
				addr, name, _ := strings.Cut(p.vals["stack"+itoa(i)], " ")
				pcs = append(pcs, parseHexT(t, addr))
				want = append(want, name)
			}
			frames := symbolizeUser(t, s, p.pid(), ReturnAddresses, pcs...)
			var got []string
			for _, f := range frames {
				got = append(got, f.Function)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("stack names:\n got %q\nwant %q", got, want)
			}
			for _, f := range frames {
				if f.Object != c.name || f.BuildID != buildID(t, bin) {
					t.Errorf("frame %#v: want object %s with build id %s", f, c.name, buildID(t, bin))
				}
			}

			// p.vals keeps the last "func" line only: check the method's entry.
			addr, name, _ := strings.Cut(p.vals["func"], " ")
			entry := parseHexT(t, addr)
			for _, off := range []uint64{0, 1} {
				if f := symbolizeUser(t, s, p.pid(), ExactAddresses, entry+off)[0]; f.Function != name || f.Offset != off {
					t.Errorf("%s+%d = %#v, want %s+%d", name, off, f, name, off)
				}
			}
		})
	}
}
