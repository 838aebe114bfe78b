package symbolize

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestKernelLive names the kernel stack of a thread blocked in read on a
// pipe. The kernel itself prints that stack in /proc/PID/stack as
// "name+offset/size"; turning each name back into its address through
// kallsyms and symbolizing address+offset must give the same name and
// offset, and the function must reach at least size bytes.
func TestKernelLive(t *testing.T) {
	s := newSymbolizer(t, Options{})
	if _, err := s.Kernel([]uint64{0}, ExactAddresses); errors.Is(err, ErrKernelHidden) {
		if os.Geteuid() == 0 {
			t.Fatalf("kallsyms hides addresses from root: %v", err)
		}
		t.Skip("kernel symbols hidden from this user, as expected without CAP_SYSLOG")
	} else if err != nil {
		t.Fatal(err)
	}
	bin := build(t, t.TempDir(), "cprog", ".c", cProg, cFlags...)
	p := start(t, bin)
	waitSyscall(t, p.pid(), 0)
	stack := readFile(t, fmt.Sprintf("/proc/%d/stack", p.pid()))

	addrs := map[string][]uint64{} // name → every text address kallsyms gives it
	for _, line := range strings.Split(readFile(t, "/proc/kallsyms"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && strings.ContainsAny(f[1], "tTwW") {
			a, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			addrs[f[2]] = append(addrs[f[2]], a)
		}
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(stack), "\n") {
		// "[<0>] pipe_read+0x33c/0x4a0"
		_, sym, _ := strings.Cut(line, "] ")
		name, rest, ok1 := strings.Cut(sym, "+")
		offS, sizeS, ok2 := strings.Cut(rest, "/")
		if !ok1 || !ok2 || strings.Contains(sizeS, " ") || len(addrs[name]) != 1 {
			continue // a module's symbol, or a name kallsyms holds twice
		}
		off, size := parseHexT(t, offS), parseHexT(t, sizeS)
		start := addrs[name][0]
		frames, err := s.Kernel([]uint64{start + off, start + size - 1}, ExactAddresses)
		if err != nil {
			t.Fatal(err)
		}
		if frames[0].Function != name || frames[0].Offset != off || frames[0].Object != "[kernel]" {
			t.Errorf("%s at %#x = %#v, want %s+%#x in [kernel]", sym, start+off, frames[0], name, off)
		}
		if frames[1].Function != name {
			t.Errorf("%s's last byte %#x names %q", name, start+size-1, frames[1].Function)
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("only %d frames of /proc/%d/stack could be checked:\n%s", checked, p.pid(), stack)
	}
	t.Logf("%d kernel frames named as /proc/%d/stack names them", checked, p.pid())
}

// TestKernelHidden reads a procfs root whose kallsyms reads zeros, as an
// unprivileged reader sees it.
func TestKernelHidden(t *testing.T) {
	root := t.TempDir()
	err := os.WriteFile(filepath.Join(root, "kallsyms"), []byte("0000000000000000 T _text\n0000000000000000 T schedule\n"), 0o444)
	if err != nil {
		t.Fatal(err)
	}
	s := newSymbolizer(t, Options{Proc: root})
	frames, err := s.Kernel([]uint64{0xffffffff81000123}, StackAddresses)
	if !errors.Is(err, ErrKernelHidden) {
		t.Errorf("Kernel error = %v, want ErrKernelHidden", err)
	}
	want := Frame{Addr: 0xffffffff81000123, Kind: Kernel, Object: "[kernel]", ObjectAddr: 0xffffffff81000123}
	if len(frames) != 1 || frames[0] != want {
		t.Errorf("frames = %#v, want [%#v]", frames, want)
	}
}
