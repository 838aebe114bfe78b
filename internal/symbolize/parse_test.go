package symbolize

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMaps(t *testing.T) {
	in := "" +
		"55d0c5c28000-55d0c5c2a000 r--p 00000000 fd:01 1234567                    /usr/bin/cat\n" +
		"55d0c5c2a000-55d0c5c2c000 r-xp 00002000 fd:01 1234567                    /usr/bin/cat\n" +
		"7f0000000000-7f0000010000 rwxp 00000000 00:00 0 \n" +
		"7f0000010000-7f0000011000 r-xs 00001000 103:0a 99                         /tmp/my lib.so (deleted)\n" +
		"7ffd1b5a8000-7ffd1b5aa000 r-xp 00000000 00:00 0                          [vdso]\n" +
		"7ffd1b5aa000-7ffd1b5ab000 r-xp 00000000 00:00 0"
	got, err := parseMaps([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{Start: 0x55d0c5c28000, End: 0x55d0c5c2a000, Perms: [4]byte{'r', '-', '-', 'p'}, Major: 0xfd, Minor: 1, Inode: 1234567, Path: "/usr/bin/cat"},
		{Start: 0x55d0c5c2a000, End: 0x55d0c5c2c000, Perms: [4]byte{'r', '-', 'x', 'p'}, Offset: 0x2000, Major: 0xfd, Minor: 1, Inode: 1234567, Path: "/usr/bin/cat"},
		{Start: 0x7f0000000000, End: 0x7f0000010000, Perms: [4]byte{'r', 'w', 'x', 'p'}},
		{Start: 0x7f0000010000, End: 0x7f0000011000, Perms: [4]byte{'r', '-', 'x', 's'}, Offset: 0x1000, Major: 0x103, Minor: 0xa, Inode: 99, Path: "/tmp/my lib.so", Deleted: true},
		{Start: 0x7ffd1b5a8000, End: 0x7ffd1b5aa000, Perms: [4]byte{'r', '-', 'x', 'p'}, Path: "[vdso]"},
		{Start: 0x7ffd1b5aa000, End: 0x7ffd1b5ab000, Perms: [4]byte{'r', '-', 'x', 'p'}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseMaps (-want +got):\n%s", diff)
	}
	var exec, file []bool
	for _, m := range got {
		exec = append(exec, m.Exec())
		file = append(file, m.FileBacked())
	}
	if diff := cmp.Diff([]bool{false, true, true, true, true, true}, exec); diff != "" {
		t.Errorf("Exec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, false, true, false, false}, file); diff != "" {
		t.Errorf("FileBacked (-want +got):\n%s", diff)
	}
}

func TestParseMapsEmpty(t *testing.T) {
	got, err := parseMaps(nil)
	if err != nil || len(got) != 0 {
		t.Errorf("parseMaps(nil) = %v, %v; want no mappings, no error", got, err)
	}
}

func TestParseMapsRejects(t *testing.T) {
	for _, in := range []string{
		"junk",
		"1000 r-xp 00000000 00:00 0",                         // no range
		"2000-1000 r-xp 00000000 00:00 0",                    // end before start
		"1000-2000 rxp 00000000 00:00 0",                     // short perms
		"1000-2000 r-xq 00000000 00:00 0",                    // bad sharing flag
		"1000-2000 r-xp 0000000g 00:00 0",                    // bad offset
		"1000-2000 r-xp 00000000 0000 0",                     // no colon in dev
		"1000-2000 r-xp 00000000 00:00 -1",                   // negative inode
		"1000-2000 r-xp 00000000 00:00 0 /a\nzz-2000 r-xp",   // second line bad
		"10000000000000000-10000000000000001 r-xp 0 00:00 0", // 17 hex digits
	} {
		if got, err := parseMaps([]byte(in)); !errors.Is(err, ErrParse) {
			t.Errorf("parseMaps(%q) = %v, %v; want ErrParse", in, got, err)
		}
	}
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte("55d0c5c2a000-55d0c5c2c000 r-xp 00002000 fd:01 1234567     /usr/bin/cat\n"))
	f.Add([]byte("7f0000000000-7f0000010000 rwxp 00000000 00:00 0 \n7ffd1b5a8000-7ffd1b5aa000 r-xp 00000000 00:00 0 [vdso]"))
	f.Add([]byte("\n\n-"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := parseMaps(b)
		if err != nil {
			if !errors.Is(err, ErrParse) {
				t.Fatalf("error %v is not ErrParse", err)
			}
			return
		}
		for _, m := range ms {
			if m.End <= m.Start {
				t.Fatalf("mapping %+v ends before it starts", m)
			}
			if len(m.Path) > maxMapsPath {
				t.Fatalf("path of %d bytes kept", len(m.Path))
			}
		}
	})
}

func TestParsePerfMap(t *testing.T) {
	in := "7f3c2d0a1000 1c0 Lcom/example/Pool;::get\n" +
		"0x7f3c2d0a2000 0x40 stub with spaces\n" +
		"\n" +
		"7f3c2d0a1000 100 Lcom/example/Pool;::get (recompiled)\n" +
		"7f3c2d0a3000 10 half-writ" // the JIT is still writing this line
	raw, err := parsePerfMap([]byte(in), 10)
	if err != nil {
		t.Fatal(err)
	}
	tab := buildTable(raw, 0, false)
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{0x7f3c2d0a1000, "Lcom/example/Pool;::get (recompiled)"},
		{0x7f3c2d0a10ff, "Lcom/example/Pool;::get (recompiled)"},
		{0x7f3c2d0a1100, ""}, // the newer entry is shorter
		{0x7f3c2d0a2010, "stub with spaces"},
		{0x7f3c2d0a2040, ""},
		{0x7f3c2d0a3000, ""},
	} {
		got := ""
		if i := tab.lookup(c.addr); i >= 0 {
			got = tab.name(i)
		}
		if got != c.want {
			t.Errorf("lookup(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
}

func TestParsePerfMapRejects(t *testing.T) {
	for _, in := range []string{
		"zz 10 name\n",
		"1000 10\n",
		"1000 xyz name\n",
		"ffffffffffffffff 10 wraps\n",
	} {
		if _, err := parsePerfMap([]byte(in), 10); !errors.Is(err, ErrParse) {
			t.Errorf("parsePerfMap(%q) error = %v, want ErrParse", in, err)
		}
	}
	if _, err := parsePerfMap([]byte(strings.Repeat("1000 10 f\n", 11)), 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("11 lines with a cap of 10: error = %v, want ErrTooLarge", err)
	}
}

func FuzzParsePerfMap(f *testing.F) {
	f.Add([]byte("7f3c2d0a1000 1c0 Lcom/example/Pool;::get\n0x10 0x10 a b\n"))
	f.Add([]byte("1 1 x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := parsePerfMap(b, 1000)
		if err != nil {
			if !errors.Is(err, ErrParse) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v is neither ErrParse nor ErrTooLarge", err)
			}
			return
		}
		tab := buildTable(raw, 0, false)
		for _, r := range raw {
			if i := tab.lookup(r.start); i >= 0 && len(tab.name(i)) > maxName+3 {
				t.Fatalf("name of %d bytes kept", len(tab.name(i)))
			}
		}
	})
}

func TestParseKallsyms(t *testing.T) {
	in := "ffffffff81000000 T _text\n" +
		"ffffffff81000000 T _stext\n" +
		"ffffffff81000100 T schedule\n" +
		"ffffffff81000180 t __schedule\n" +
		"ffffffff81000200 D some_data\n" +
		"ffffffff81000300 W weak_fn\n" +
		"ffffffffc0001000 t ext4_fill_super\t[ext4]\n" +
		"ffffffffc0001400 t ext4_iget\t[ext4]\n"
	tab, hidden, err := parseKallsyms([]byte(in))
	if err != nil || hidden {
		t.Fatalf("parseKallsyms: hidden %v, %v", hidden, err)
	}
	for _, c := range []struct {
		addr         uint64
		name, module string
	}{
		{0xffffffff81000010, "_text", "[kernel]"}, // fewer underscores than _stext, then shorter
		{0xffffffff81000100, "schedule", "[kernel]"},
		{0xffffffff8100017f, "schedule", "[kernel]"},
		{0xffffffff81000250, "__schedule", "[kernel]"}, // data symbols are not functions and end nothing
		{0xffffffff81000310, "weak_fn", "[kernel]"},
		{0xffffffffc00013ff, "ext4_fill_super", "[ext4]"},
		{0xffffffffc0001400, "", ""}, // the last symbol has no known end
	} {
		var name, module string
		if i := tab.lookup(c.addr); i >= 0 {
			name = tab.name(i)
			module = tab.modules[tab.module[i]]
		}
		if name != c.name || module != c.module {
			t.Errorf("lookup(%#x) = %q in %q, want %q in %q", c.addr, name, module, c.name, c.module)
		}
	}
	// weak_fn reaches to ext4_fill_super only as far as the extent cap.
	if i := tab.lookup(0xffffffff81000300 + maxKernelExtent); i >= 0 {
		t.Errorf("an address %#x past weak_fn names %q", maxKernelExtent, tab.name(i))
	}
}

func TestParseKallsymsHidden(t *testing.T) {
	in := "0000000000000000 T _text\n0000000000000000 T schedule\n0000000000000000 t ext4_iget\t[ext4]\n"
	_, hidden, err := parseKallsyms([]byte(in))
	if err != nil || !hidden {
		t.Errorf("parseKallsyms(zeros) = hidden %v, %v; want hidden", hidden, err)
	}
}

func TestParseKallsymsRejects(t *testing.T) {
	for _, in := range []string{"junk\n", "ffffffff81000000 TT x\n", "ffffffff81000000 T\n", "ffffffff8100000g T x\n"} {
		if _, _, err := parseKallsyms([]byte(in)); !errors.Is(err, ErrParse) {
			t.Errorf("parseKallsyms(%q) error = %v, want ErrParse", in, err)
		}
	}
}

func FuzzParseKallsyms(f *testing.F) {
	f.Add([]byte("ffffffff81000000 T _text\nffffffffc0001000 t ext4_fill_super\t[ext4]\n"))
	f.Add([]byte("0000000000000000 T x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, hidden, err := parseKallsyms(b)
		if err != nil {
			if !errors.Is(err, ErrParse) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error %v is neither ErrParse nor ErrTooLarge", err)
			}
			return
		}
		if hidden && len(tab.syms) != 0 {
			t.Fatalf("hidden but %d symbols kept", len(tab.syms))
		}
		for i := range tab.syms {
			if tab.module != nil && int(tab.module[i]) >= len(tab.modules) {
				t.Fatalf("symbol %d has module index %d of %d", i, tab.module[i], len(tab.modules))
			}
		}
	})
}

func TestParseNSpid(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"Name:\tjava\nNSpid:\t4242\t1\nNSsid:\t1\n", 1, true},
		{"NSpid:\t4242\n", 4242, true},
		{"Name:\tjava\n", 0, false},
		{"NSpid:\n", 0, false},
		{"NSpid:\t4242\tx\n", 0, false},
		{"NSpid:\t99999999\n", 0, false},
	} {
		got, ok := parseNSpid([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("parseNSpid(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func FuzzParseNSpid(f *testing.F) {
	f.Add([]byte("NSpid:\t4242\t1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, ok := parseNSpid(b); ok && (v <= 0 || v > 1<<22) {
			t.Fatalf("parseNSpid(%q) = %d, not a PID", b, v)
		}
	})
}

// note builds one ELF note: name, descriptor, type, each padded to 4 bytes.
func note(name string, typ uint32, desc []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)+1))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
	b = binary.LittleEndian.AppendUint32(b, typ)
	b = append(b, name...)
	b = append(b, 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func TestParseBuildID(t *testing.T) {
	id := []byte{0x40, 0x2e, 0x6b, 0x09, 0xff}
	goNote := note("Go", 4, []byte("abcdefg/hij"))
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"alone", note("GNU", 3, id), "402e6b09ff"},
		{"after a Go note", append(append([]byte{}, goNote...), note("GNU", 3, id)...), "402e6b09ff"},
		{"GNU note of another type", note("GNU", 1, id), ""},
		{"truncated", note("GNU", 3, id)[:18], ""},
		{"empty", nil, ""},
	} {
		if got := parseBuildID(c.in, binary.LittleEndian); got != c.want {
			t.Errorf("%s: parseBuildID = %q, want %q", c.name, got, c.want)
		}
	}
}

func FuzzParseBuildID(f *testing.F) {
	f.Add(note("GNU", 3, []byte{1, 2, 3, 4}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if id := parseBuildID(b, binary.LittleEndian); len(id) > 128 {
			t.Fatalf("build id of %d hex digits", len(id))
		}
	})
}

func TestBuildTableAliases(t *testing.T) {
	raw := []rawSym{
		{start: 0x1000, size: 0x20, name: "__libc_read", rank: rankDynsym + 20_000},
		{start: 0x1000, size: 0x20, name: "read", rank: rankDynsym + 1_000 + 4},
		{start: 0x1000, size: 0x20, name: "__read", rank: rankDynsym + 20_000},
		{start: 0x1040, name: "sizeless"},
		{start: 0x1100, size: 0x10, name: strings.Repeat("x", maxName+10)},
		{start: 0x2000, name: "last_sizeless"},
	}
	tab := buildTable(raw, 0x80, false)
	for _, c := range []struct {
		addr uint64
		want string
	}{
		{0x1000, "read"},
		{0x101f, "read"},
		{0x1020, ""},
		{0x1040, "sizeless"},
		{0x10bf, "sizeless"},
		{0x10c0, ""}, // capped at 0x80 before 0x1100
		{0x1100, strings.Repeat("x", maxName) + "..."},
		{0x2000, ""},
		{0xfff, ""},
	} {
		got := ""
		if i := tab.lookup(c.addr); i >= 0 {
			got = tab.name(i)
		}
		if got != c.want {
			t.Errorf("lookup(%#x) = %q, want %q", c.addr, got, c.want)
		}
	}
}

func TestDisplayName(t *testing.T) {
	for _, c := range []struct {
		in   string
		full bool
		want string
	}{
		{"_ZN3app9WorkQueue4takeEv", false, "app::WorkQueue::take"},
		{"_ZN3app9WorkQueue4takeEv", true, "app::WorkQueue::take()"},
		{"_ZNSt6vectorIiSaIiEE9push_backERKi", false, "std::vector::push_back"},
		{"_ZN3app4workEi.constprop.0", false, "app::work"},
		{"_Zjunk", false, "_Zjunk"},
		{"main.(*pool).Get", false, "main.(*pool).Get"},
		{"evil\x1b[2J", false, "evil?[2J"},
		// HotSpot's Compiler.perfmap: the return type and arguments go.
		{"void java.util.concurrent.locks.LockSupport.park(java.lang.Object)", false, "java.util.concurrent.locks.LockSupport.park"},
		{"void PingPong$Player.run()", false, "PingPong$Player.run"},
		{"java.lang.String[] app.Names.all(int, long[])", false, "app.Names.all"},
		{"void PingPong$Player.run()", true, "void PingPong$Player.run()"},
		// Other JITs' names are left as they are.
		{"LazyCompile:~handler /srv/app.js:12", false, "LazyCompile:~handler /srv/app.js:12"},
		{"void [System.Private.CoreLib] System.Threading.Monitor::Wait(object)[Optimized]", false, "void [System.Private.CoreLib] System.Threading.Monitor::Wait(object)[Optimized]"},
		{"stub<1> (unknown)", false, "stub<1> (unknown)"},
	} {
		if got := displayName(c.in, c.full); got != c.want {
			t.Errorf("displayName(%q, full=%v) = %q, want %q", c.in, c.full, got, c.want)
		}
	}
}
