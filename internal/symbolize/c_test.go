package symbolize

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cProg blocks in consumer_wait (a read of stdin) called from reader_loop,
// then, after one byte, in wait_forever, which reader_loop calls as its
// very last instruction: wait_forever's return address is the first byte
// after reader_loop. -falign-functions=1 packs the functions so that this
// byte is after_reader's first one.
const cProg = `
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline, noreturn)) static void wait_forever(void) {
	printf("reader_loop_ret %p\nready\n", __builtin_return_address(0));
	fflush(stdout);
	char b;
	for (;;)
		if (read(0, &b, 1) <= 0)
			exit(0);
}

__attribute__((noinline)) int consumer_wait(int fd) {
	char b;
	printf("consumer_wait_ret %p\nready\n", __builtin_return_address(0));
	fflush(stdout);
	return (int)read(fd, &b, 1);
}

__attribute__((noinline, noreturn)) void reader_loop(void) {
	consumer_wait(0);
	wait_forever();
}

__attribute__((noinline)) void after_reader(void) { puts("never"); }

int main(void) {
	printf("consumer_wait %p\nreader_loop %p\nafter_reader %p\n",
	       (void *)consumer_wait, (void *)reader_loop, (void *)after_reader);
	reader_loop();
}
`

// cFlags are the flags of a program built for off-CPU profiling; Debian's
// gcc builds PIE by default, so the load bias is exercised.
var cFlags = []string{"cc", "-fno-omit-frame-pointer", "-O1", "-g0", "-falign-functions=1"}

func TestCProgram(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, "cprog", ".c", cProg, cFlags...)
	if out, err := exec.Command("readelf", "-h", bin).Output(); err != nil || !strings.Contains(string(out), "DYN") {
		t.Fatalf("cprog is not PIE (readelf -h: %v):\n%s", err, out)
	}
	p := start(t, bin)
	pc := waitSyscall(t, p.pid(), 0) // read
	wantID := buildID(t, bin)

	for _, viaRoot := range []bool{false, true} {
		name := "map_files"
		if viaRoot {
			name = "root"
		}
		t.Run(name, func(t *testing.T) {
			s := newSymbolizer(t, Options{})
			s.noMapFiles = viaRoot

			// A stack as bpf_get_stackid gives it: the blocked instruction in
			// libc's read, then the return address into reader_loop.
			stack := symbolizeUser(t, s, p.pid(), StackAddresses, pc, p.addr(t, "consumer_wait_ret"))
			libc := mappedPath(t, p.pid(), "libc.so")
			if got := stack[0]; !strings.Contains(got.Function, "read") || got.Object != filepath.Base(libc) || got.BuildID != buildID(t, libc) {
				t.Errorf("blocked pc %#x = %#v, want a read function in %s with build id %s", pc, got, filepath.Base(libc), buildID(t, libc))
			}
			if got := stack[1]; got.Function != "reader_loop" || got.Object != "cprog" || got.BuildID != wantID {
				t.Errorf("return address = %#v, want reader_loop in cprog with build id %s", got, wantID)
			}
			if got := InnermostOwn(stack); got != 1 {
				t.Errorf("InnermostOwn = %d, want 1 (reader_loop, below libc)", got)
			}

			for _, fn := range []string{"consumer_wait", "reader_loop", "after_reader"} {
				addr := p.addr(t, fn)
				nm := nmAddr(t, bin, fn)
				if addr == nm {
					t.Errorf("%s runs at its link address %#x: no load bias to exercise", fn, addr)
				}
				got := symbolizeUser(t, s, p.pid(), StackAddresses, addr)[0]
				if got.Function != fn || got.Offset != 0 || got.ObjectAddr != nm {
					t.Errorf("%s at %#x = %#v, want %s+0 at ELF address %#x (nm)", fn, addr, got, fn, nm)
				}
				got = symbolizeUser(t, s, p.pid(), ExactAddresses, addr+3)[0]
				if got.Function != fn || got.Offset != 3 {
					t.Errorf("%s+3 = %#v, want offset 3 in %s", fn, got, fn)
				}
			}
		})
	}

	// Let consumer_wait return: the program blocks in wait_forever, whose
	// return address lies past reader_loop's last byte.
	if _, err := p.stdin.Write([]byte{'x'}); err != nil {
		t.Fatal(err)
	}
	p.readUntil(t, "ready")
	ret := p.addr(t, "reader_loop_ret")
	s := newSymbolizer(t, Options{})
	frames := symbolizeUser(t, s, p.pid(), StackAddresses, waitSyscall(t, p.pid(), 0), ret)
	if frames[1].Function != "reader_loop" {
		t.Errorf("return address %#x as frame 1 names %q, want reader_loop (looked up at address-1)", ret, frames[1].Function)
	}
	if got := symbolizeUser(t, s, p.pid(), ReturnAddresses, ret)[0].Function; got != "reader_loop" {
		t.Errorf("ReturnAddresses names %q, want reader_loop", got)
	}
	exact := symbolizeUser(t, s, p.pid(), ExactAddresses, ret)[0].Function
	if exact == "reader_loop" {
		t.Errorf("ExactAddresses names reader_loop for the byte past its end; the test cannot tell the conventions apart")
	}
	t.Logf("the return address looked up exactly names %q", exact)
}

func TestCProgramStripped(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir, "cprog", ".c", cProg, cFlags...)
	stripped := bin + ".stripped"
	if out, err := exec.Command("strip", "-o", stripped, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	p := start(t, stripped)
	s := newSymbolizer(t, Options{})
	wantID := buildID(t, stripped)
	if wantID != buildID(t, bin) {
		t.Fatalf("strip changed the build id")
	}
	for _, fn := range []string{"consumer_wait", "reader_loop"} {
		got := symbolizeUser(t, s, p.pid(), StackAddresses, p.addr(t, fn))[0]
		nm := nmAddr(t, bin, fn)
		want := Frame{Addr: p.addr(t, fn), Object: "cprog.stripped", ObjectAddr: nm, BuildID: wantID}
		if got != want {
			t.Errorf("stripped %s = %#v, want %#v", fn, got, want)
		}
		if want := fmt.Sprintf("cprog.stripped+%#x", nm); got.String() != want {
			t.Errorf("stripped %s String() = %q, want %q", fn, got.String(), want)
		}
	}
}

// TestCacheBudget: with room for one file's table, symbolizing addresses
// of two files in turn keeps one table at a time, reloads the other, and
// names both correctly every time.
func TestCacheBudget(t *testing.T) {
	bin := build(t, t.TempDir(), "cprog", ".c", cProg, cFlags...)
	p := start(t, bin)
	pc := waitSyscall(t, p.pid(), 0)
	s := newSymbolizer(t, Options{CacheBytes: 1})
	want := ""
	for round := range 3 {
		frames := symbolizeUser(t, s, p.pid(), StackAddresses, pc, p.addr(t, "consumer_wait_ret"))
		if want == "" {
			want = frames[0].Function
		}
		if frames[0].Function != want || want == "" || frames[1].Function != "reader_loop" {
			t.Errorf("round %d: %q, %q; want %q, reader_loop", round, frames[0].Function, frames[1].Function, want)
		}
		if st := s.Stats(); st.Objects != 1 {
			t.Errorf("round %d: %d tables kept with room for one", round, st.Objects)
		}
	}
	unbounded := newSymbolizer(t, Options{})
	symbolizeUser(t, unbounded, p.pid(), StackAddresses, pc, p.addr(t, "consumer_wait_ret"))
	if st := unbounded.Stats(); st.Objects != 2 || st.ObjectBytes < 1000 {
		t.Errorf("default budget: %+v, want the 2 tables (libc, cprog)", st)
	}
}
