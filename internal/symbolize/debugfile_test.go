package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, dir string, argv ...string) {
	t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

// strippedProg builds cProg, keeps its debug file (objcopy
// --only-keep-debug, as distributions split them) and strips the binary.
func strippedProg(t *testing.T, dir string, flags ...string) (bin, debug string) {
	t.Helper()
	full := build(t, dir, "cprog", ".c", cProg, append(cFlags, flags...)...)
	debug = full + ".debug"
	bin = filepath.Join(dir, "stripped")
	run(t, dir, "objcopy", "--only-keep-debug", full, debug)
	run(t, dir, "strip", "--strip-all", "-o", bin, full)
	return bin, debug
}

// otherDebug is the debug file of another build of the same program: same
// functions, another build id, other addresses.
func otherDebug(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	_, debug := strippedProg(t, dir, "-DOTHER_BUILD=1", "-O2")
	return debug
}

func placeFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkNamed symbolizes cProg's functions: named when want, else unnamed.
func checkNamed(t *testing.T, s *Symbolizer, p *prog, want bool) {
	t.Helper()
	for _, fn := range []string{"consumer_wait", "reader_loop"} {
		got := symbolizeUser(t, s, p.pid(), ExactAddresses, p.addr(t, fn))[0]
		switch {
		case want && got.Function != fn:
			t.Errorf("%s at %#x named %q (%s), want %q", fn, got.Addr, got.Function, got, fn)
		case !want && got.Function != "":
			t.Errorf("%s at %#x named %q, want no name: that debug file is not this binary's", fn, got.Addr, got.Function)
		}
	}
}

func TestDebugFileByBuildID(t *testing.T) {
	dir := t.TempDir()
	bin, debug := strippedProg(t, dir)
	p := start(t, bin)
	id := buildID(t, bin)
	root := t.TempDir()
	at := filepath.Join(root, "usr/lib/debug/.build-id", id[:2], id[2:]+".debug")

	s := newSymbolizer(t, Options{DebugRoot: root})
	checkNamed(t, s, p, false)

	placeFile(t, debug, at)
	checkNamed(t, newSymbolizer(t, Options{DebugRoot: root}), p, true)

	// A file at the right place whose build id is another's is refused.
	placeFile(t, otherDebug(t), at)
	checkNamed(t, newSymbolizer(t, Options{DebugRoot: root}), p, false)
}

func TestDebugLink(t *testing.T) {
	dir := t.TempDir()
	bin, debug := strippedProg(t, dir)
	run(t, dir, "objcopy", "--add-gnu-debuglink="+debug, bin)
	link := filepath.Join(dir, ".debug", filepath.Base(debug))
	placeFile(t, debug, link)
	os.Remove(debug) // only the .debug/ place has it now
	p := start(t, bin)
	empty := t.TempDir()

	checkNamed(t, newSymbolizer(t, Options{DebugRoot: empty}), p, true)

	// The same name with another content: the CRC does not match.
	placeFile(t, otherDebug(t), link)
	checkNamed(t, newSymbolizer(t, Options{DebugRoot: empty}), p, false)
}

// TestMiniDebugInfo builds MiniDebugInfo as Fedora's find-debuginfo does:
// the function symbols .dynsym lacks, in a stripped copy of the debug
// file, xz-compressed into the binary's .gnu_debugdata.
func TestMiniDebugInfo(t *testing.T) {
	dir := t.TempDir()
	bin, debug := strippedProg(t, dir)
	out, err := exec.Command("nm", "--format=posix", "--defined-only", debug).Output()
	if err != nil {
		t.Fatalf("nm: %v", err)
	}
	var keep []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && (f[1] == "T" || f[1] == "t") {
			keep = append(keep, f[0])
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "objcopy", "-S", "--remove-section", ".gdb_index", "--remove-section", ".comment", "--keep-symbols=keep", debug, "mini")
	run(t, dir, "xz", "mini")
	run(t, dir, "objcopy", "--add-section", ".gnu_debugdata=mini.xz", bin)
	os.Remove(debug)
	p := start(t, bin)
	checkNamed(t, newSymbolizer(t, Options{DebugRoot: t.TempDir()}), p, true)
}

// TestLibcLocalFromDebugFile: Debian's libc has no .symtab; start_thread
// is local, and named only from libc6-dbg's file by build id.
func TestLibcLocalFromDebugFile(t *testing.T) {
	bin := build(t, t.TempDir(), "cprog", ".c", cProg, cFlags...)
	p := start(t, bin)
	libc := mappedPath(t, p.pid(), "libc.so")
	id := buildID(t, libc)
	debug := "/usr/lib/debug/.build-id/" + id[:2] + "/" + id[2:] + ".debug"
	if _, err := os.Stat(debug); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("libc's debug file %s is missing: CI installs libc6-dbg", debug)
		}
		t.Skipf("libc's debug file is not installed (libc6-dbg): %v", err)
	}
	ef, err := elf.Open(debug)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var vaddr uint64
	for _, s := range syms {
		if s.Name == "start_thread" && elf.ST_BIND(s.Info) == elf.STB_LOCAL {
			vaddr = s.Value
		}
	}
	if vaddr == 0 {
		t.Fatalf("%s has no local start_thread", debug)
	}
	addr := runtimeAddr(t, p.pid(), libc, vaddr+8)
	for _, withDebug := range []bool{false, true} {
		s := newSymbolizer(t, Options{})
		s.noDebugFiles = !withDebug
		got := symbolizeUser(t, s, p.pid(), ExactAddresses, addr)[0]
		if want := map[bool]string{true: "start_thread", false: ""}[withDebug]; got.Function != want || (withDebug && got.Offset != 8) {
			t.Errorf("debug file %v: %#x = %q+%d, want %q+8", withDebug, addr, got.Function, got.Offset, want)
		}
	}
}

// runtimeAddr turns an ELF address of the file at path into its address
// in process pid.
func runtimeAddr(t *testing.T, pid int, path string, vaddr uint64) uint64 {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	var fileOff uint64
	found := false
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			fileOff, found = vaddr-p.Vaddr+p.Off, true
		}
	}
	if !found {
		t.Fatalf("%#x is in no PT_LOAD of %s", vaddr, path)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		t.Fatal(err)
	}
	maps, err := parseMaps(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range maps {
		if m.Path == path && m.Exec() && fileOff >= m.Offset && fileOff < m.Offset+(m.End-m.Start) {
			return m.Start + fileOff - m.Offset
		}
	}
	t.Fatalf("%s offset %#x is not mapped executable in %d", path, fileOff, pid)
	return 0
}

// TestUnxz decodes what xz(1) writes: every preset, the checks, several
// blocks, concatenated streams; a corrupted stream is an error.
func TestUnxz(t *testing.T) {
	if _, err := exec.LookPath("xz"); err != nil {
		t.Fatalf("xz is not installed: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	text := bytes.Repeat([]byte("pthread_cond_wait ledger_settle worker start_thread "), 4000)
	random := make([]byte, 100_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	elfFile, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	mixed := append(append(append([]byte{}, text[:30000]...), random[:30000]...), elfFile...)
	inputs := map[string][]byte{"text": text, "random": random, "elf": elfFile, "mixed": mixed, "empty": nil, "byte": {42}}
	for name, in := range inputs {
		for _, args := range [][]string{{"-0"}, {"-6"}, {"-9", "-e"}, {"--check=crc32"}, {"--check=none"},
			{"--check=sha256"}, {"--block-size=10000"}, {"--lzma2=preset=6,lc=1,lp=3,pb=0"}} {
			c := exec.Command("xz", append([]string{"-c"}, args...)...)
			c.Stdin = bytes.NewReader(in)
			packed, err := c.Output()
			if err != nil {
				t.Fatalf("xz %v: %v", args, err)
			}
			got, err := unxz(packed, 1<<24)
			if err != nil {
				t.Errorf("%s, xz %v: %v", name, args, err)
				continue
			}
			if !bytes.Equal(got, in) {
				t.Errorf("%s, xz %v: %d bytes out, want the %d bytes in", name, args, len(got), len(in))
			}
			if len(in) > 1000 {
				if _, err := unxz(packed, len(in)-1); err == nil {
					t.Errorf("%s, xz %v: a limit below the size is no error", name, args)
				}
				bad := bytes.Clone(packed)
				bad[len(bad)/2] ^= 0x55
				if got, err := unxz(bad, 1<<24); err == nil && bytes.Equal(got, in) {
					t.Errorf("%s, xz %v: a flipped byte decoded to the original", name, args)
				}
			}
		}
	}
	two := append(xzOf(t, text[:1000]), xzOf(t, random[:1000])...)
	if got, err := unxz(two, 1<<20); err != nil || !bytes.Equal(got, append(append([]byte{}, text[:1000]...), random[:1000]...)) {
		t.Errorf("two streams: %d bytes, %v", len(got), err)
	}
}

func xzOf(t testing.TB, b []byte) []byte {
	t.Helper()
	c := exec.Command("xz", "-c")
	c.Stdin = bytes.NewReader(b)
	out, err := c.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func FuzzUnxz(f *testing.F) {
	f.Add(xzOf(f, bytes.Repeat([]byte("abcabcabd"), 300)))
	f.Add(xzOf(f, []byte{1, 2, 3}))
	f.Add([]byte("\xfd7zXZ\x00\x00\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := unxz(b, 1<<20)
		if err == nil && len(out) > 1<<20 {
			t.Errorf("%d bytes out, over the limit", len(out))
		}
	})
}

func FuzzParseDebugLink(f *testing.F) {
	f.Add([]byte("libc.so.6.debug\x00\x00\x00\x00\x01\x02\x03\x04"))
	f.Add([]byte("../x\x00\x00\x00\x00\x01\x02\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		name, _, ok := parseDebugLink(b, binary.LittleEndian)
		if ok && (name == "" || strings.ContainsRune(name, '/') || strings.ContainsRune(name, 0)) {
			t.Errorf("accepted name %q", name)
		}
	})
}
