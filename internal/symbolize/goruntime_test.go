package symbolize

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dwarfOffsets reads the byte offsets of the named structs' fields from a
// binary's DWARF: "runtime.g.sched" and so on.
func dwarfOffsets(t *testing.T, path string, structs ...string) map[string]int64 {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	d, err := ef.DWARF()
	if err != nil {
		t.Fatalf("%s has no DWARF: %v", path, err)
	}
	want := map[string]bool{}
	for _, s := range structs {
		want[s] = true
	}
	out := map[string]int64{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagStructType {
			continue
		}
		name, _ := e.Val(dwarf.AttrName).(string)
		if !want[name] {
			r.SkipChildren()
			continue
		}
		typ, err := d.Type(e.Offset)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range typ.(*dwarf.StructType).Field {
			out[name+"."+f.Name] = f.ByteOffset
		}
		r.SkipChildren()
	}
	return out
}

// TestGoLayoutMatchesDWARF checks the layout table against the DWARF of a
// binary this toolchain builds (go test links its binaries without DWARF,
// so a small program is built): the table's entry
// for this Go release must exist and agree field by field, so a new release
// that moves a field fails here instead of making the tracer read the
// wrong words.
func TestGoLayoutMatchesDWARF(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the table is of amd64 layouts")
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "prog")
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module prog\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	off := dwarfOffsets(t, exe, "runtime.g", "runtime.m", "runtime.gobuf", "runtime.stack")
	field := func(name string) uint32 {
		v, ok := off[name]
		if !ok {
			t.Fatalf("DWARF has no %s", name)
		}
		return uint32(v)
	}
	want := GoRuntime{
		GM:       field("runtime.g.m"),
		GStack:   field("runtime.g.stack"),
		GSchedPC: field("runtime.g.sched") + field("runtime.gobuf.pc"),
		GSchedBP: field("runtime.g.sched") + field("runtime.gobuf.bp"),
		MG0:      field("runtime.m.g0"),
		MLockedG: field("runtime.m.lockedg"),
	}
	// The tracer reads g.stack as two words, lo then hi.
	if lo, hi := field("runtime.stack.lo"), field("runtime.stack.hi"); lo != 0 || hi != 8 {
		t.Errorf("runtime.stack is {lo at %d, hi at %d}, not {lo, hi}", lo, hi)
	}
	rel := goRelease(runtime.Version())
	got, ok := goLayouts[rel]
	if !ok {
		t.Fatalf("no layout for %s; its DWARF says %+v", rel, want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layout of %s (-DWARF +table):\n%s", rel, diff)
	}

	// And the executable is recognized as of this release, as is one
	// linked without DWARF (the table needs none).
	f, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rt, err := goRuntimeOf(f)
	if err != nil {
		t.Fatalf("goRuntimeOf(test binary): %v", err)
	}
	if rt.Version != runtime.Version() {
		t.Errorf("version %q, want %q", rt.Version, runtime.Version())
	}
	stripped := filepath.Join(dir, "stripped")
	cmd = exec.Command("go", "build", "-ldflags=-s -w", "-o", stripped, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if rt2, err := goRuntimeOfFile(t, stripped); err != nil || rt2 != rt {
		t.Errorf("stripped: %+v, %v; want %+v", rt2, err, rt)
	}
}

func TestGoProcess(t *testing.T) {
	s, err := New(Options{Proc: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := s.GoProcess(os.Getpid())
	if runtime.GOARCH == "amd64" && (err != nil || rt.Version != runtime.Version()) {
		t.Errorf("GoProcess(self) = %+v, %v", rt, err)
	}
	// Asked again: the same answer, remembered.
	if rt2, err2 := s.GoProcess(os.Getpid()); rt2 != rt || !errors.Is(err2, err) {
		t.Errorf("again: %+v, %v", rt2, err2)
	}
	if len(s.goBinaries) != 1 {
		t.Errorf("%d binaries remembered, want 1", len(s.goBinaries))
	}
	// A C program (the shell) is no Go program.
	if _, err := goRuntimeOfFile(t, "/bin/sh"); !errors.Is(err, ErrNotGo) {
		t.Errorf("/bin/sh: %v, want ErrNotGo", err)
	}
}

func goRuntimeOfFile(t *testing.T, path string) (GoRuntime, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	return goRuntimeOf(f)
}

func buildInfo(flags byte, version string) []byte {
	b := append([]byte("\xff Go buildinf:"), 8, flags)
	b = append(b, make([]byte, 16)...)
	b = append(b, byte(len(version)))
	return append(b, version...)
}

func TestParseGoVersion(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		want string
		ok   bool
	}{
		{buildInfo(2, "go1.26.8"), "go1.26.8", true},
		{buildInfo(2, "go1.26rc1"), "go1.26rc1", true},
		{buildInfo(0, "go1.17"), "", false},                             // pointers, not inline strings
		{buildInfo(2, "devel +abc"), "", false},                         // a development toolchain: layout unknown
		{buildInfo(2, "go1.26.8")[:35], "", false},                      // cut inside the string
		{append([]byte("\xfe"), buildInfo(2, "go1")[1:]...), "", false}, // bad magic
		{nil, "", false},
	} {
		got, err := parseGoVersion(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("parseGoVersion(%q) = %q, %v; want %q, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	for v, want := range map[string]string{"go1.26.8": "go1.26", "go1.26rc1": "go1.26", "go1.26.8 X:nodwarf5": "go1.26", "go1.": "go1."} {
		if got := goRelease(v); got != want {
			t.Errorf("goRelease(%q) = %q, want %q", v, got, want)
		}
	}
}

func FuzzParseGoVersion(f *testing.F) {
	f.Add(buildInfo(2, "go1.26.8"))
	f.Add(buildInfo(2, "go1.2"+strconv.Itoa(9)))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := parseGoVersion(b)
		if err == nil && (!bytes.Contains(b, []byte(v)) || goRelease(v) == "") {
			t.Errorf("parseGoVersion(%q) = %q", b, v)
		}
	})
}

// A malformed executable is an error, never a panic.
func FuzzGoRuntimeOf(f *testing.F) {
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = goRuntimeOf(bytes.NewReader(b))
	})
}
