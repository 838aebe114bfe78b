package unwind

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var regNames = map[string]int{
	"rax": 0, "rdx": 1, "rcx": 2, "rbx": 3, "rsi": 4, "rdi": 5, "rbp": 6, "rsp": 7,
	"r8": 8, "r9": 9, "r10": 10, "r11": 11, "r12": 12, "r13": 13, "r14": 14, "r15": 15, "ra": 16,
}

func regName(r uint8) string {
	for n, v := range regNames {
		if v == int(r) {
			return n
		}
	}
	return "r?" + strconv.Itoa(int(r))
}

// readelfStyle spells a rule as readelf --debug-dump=frames-interp does.
func readelfStyle(ru rule) string {
	switch ru.kind {
	case ruleCFAReg:
		return fmt.Sprintf("%s%+d", regName(ru.reg), ru.off)
	case ruleCFAExpr, ruleExpr:
		return "exp"
	case ruleValExpr:
		return "vexp"
	case ruleOffset:
		return fmt.Sprintf("c%+d", ru.off)
	case ruleValOffset:
		return fmt.Sprintf("v%+d", ru.off)
	case ruleRegister:
		return regName(ru.reg)
	case ruleUndef:
		return "u"
	}
	return "s"
}

// TestRowsMatchReadelf computes the row at every location readelf's
// interpreter prints for every FDE of a file (libc: 3,713 FDEs, with
// remember/restore_state, PLT and signal-frame expressions), found through
// .eh_frame_hdr's table, and compares the CFA and every register column.
func TestRowsMatchReadelf(t *testing.T) {
	debugFrame := buildProg(t, "ledger", ".c", ledgerC, "cc", "-O2", "-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")
	for _, path := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/bin/ls", debugFrame} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Skipf("%v", err)
			}
			defer f.Close()
			obj, err := loadCFI(f)
			if err != nil {
				t.Fatal(err)
			}
			if obj.hdr == nil {
				t.Errorf("no .eh_frame_hdr table found")
			}
			if path == debugFrame && len(obj.dbg.index) == 0 {
				t.Errorf("no .debug_frame FDEs found")
			}
			// readelf exits 1 over libc's separate debug file it cannot
			// follow, after printing the frames: judge by what it printed.
			out, err := exec.Command("readelf", "--debug-dump=frames-interp", path).Output()
			if len(out) == 0 {
				t.Fatalf("readelf: %v", err)
			}
			rows, mismatches := 0, 0
			var cols []string
			inFDE := false
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				line := sc.Text()
				f := strings.Fields(line)
				switch {
				case len(f) >= 4 && f[3] == "FDE":
					inFDE = true
					continue
				case len(f) >= 4 && f[3] == "CIE", len(f) == 0:
					inFDE = line != "" && inFDE && len(f) != 0
					if len(f) >= 4 {
						inFDE = false
					}
					continue
				case f[0] == "LOC":
					cols = f[2:]
					continue
				}
				if !inFDE || len(f) != len(cols)+2 {
					continue
				}
				loc, err := strconv.ParseUint(f[0], 16, 64)
				if err != nil {
					continue
				}
				fd, sec, err := obj.findFDE(loc)
				if err != nil {
					t.Errorf("%#x: %v", loc, err)
					mismatches++
					continue
				}
				r, err := computeRow(&fd, sec, loc)
				if err != nil {
					t.Errorf("%#x: %v", loc, err)
					mismatches++
					continue
				}
				rows++
				got := []string{readelfStyle(r.cfa)}
				want := []string{f[1]}
				for i, c := range cols {
					reg, ok := regNames[c]
					if !ok {
						continue // a vector register: not tracked
					}
					g := readelfStyle(r.regs[reg])
					w := f[2+i]
					if w == "u" && g == "s" {
						// readelf starts a column it prints as "u"; an
						// unmentioned register keeps its value (same).
						g = "u"
					}
					got, want = append(got, c+"="+g), append(want, c+"="+w)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					mismatches++
					if mismatches < 10 {
						t.Errorf("row at %#x: %v, readelf says %v", loc, got, want)
					}
				}
			}
			t.Logf("%s: %d rows compared, %d differ", path, rows, mismatches)
			if rows < 20 {
				t.Errorf("only %d rows compared", rows)
			}
		})
	}
}

// TestSignalFrameCIE: libc's __restore_rt has the 'S' augmentation.
func TestSignalFrameCIE(t *testing.T) {
	const libc = "/lib/x86_64-linux-gnu/libc.so.6"
	ef, err := elf.Open(libc)
	if err != nil {
		t.Skip(err)
	}
	syms, _ := ef.DynamicSymbols()
	ef.Close()
	var sigaction uint64
	for _, s := range syms {
		if s.Name == "sigaction" {
			sigaction = s.Value
		}
	}
	f, err := os.Open(libc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	obj, err := loadCFI(f)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for off := 0; off < len(obj.eh.data); {
		e, next, err := entryAt(&obj.eh, off)
		if err != nil || next <= off {
			break
		}
		if e.fde {
			if fd, err := parseFDE(&obj.eh, off); err == nil && fd.cie.signal {
				found = true
				r, err := computeRow(&fd, &obj.eh, fd.start+1)
				if err != nil || !r.signal || r.cfa.kind != ruleCFAExpr || r.regs[regRA].kind != ruleExpr {
					t.Errorf("signal FDE at %#x: row %+v, %v", fd.start, r, err)
				}
			}
		}
		off = next
	}
	if !found {
		t.Errorf("no signal-frame FDE in %s (sigaction at %#x)", libc, sigaction)
	}
}

// FuzzCFI parses arbitrary bytes as .eh_frame and as .debug_frame and
// computes rows for every FDE found: errors, never a panic.
func FuzzCFI(f *testing.F) {
	if b, err := os.ReadFile("/bin/true"); err == nil {
		if ef, err := elf.NewFile(bytes.NewReader(b)); err == nil {
			if s := ef.Section(".eh_frame"); s != nil {
				if d, err := s.Data(); err == nil {
					f.Add(d[:min(len(d), 4096)], uint64(s.Addr))
				}
			}
		}
	}
	f.Add([]byte("\x14\x00\x00\x00\x00\x00\x00\x00\x01zR\x00\x01\x78\x10\x01\x1b\x0c\x07\x08\x90\x01\x00\x00"), uint64(0x1000))
	f.Fuzz(func(t *testing.T, b []byte, addr uint64) {
		for _, debug := range []bool{false, true} {
			s := section{data: b, addr: addr, debug: debug}
			s.index = scanFDEs(&s)
			for _, e := range s.index {
				fd, err := parseFDE(&s, int(e.off))
				if err != nil {
					continue
				}
				for _, pc := range []uint64{fd.start, fd.start + 1, (fd.start + fd.end) / 2, fd.end - 1} {
					r, err := computeRow(&fd, &s, pc)
					if err != nil {
						continue
					}
					obj := &cfiObject{eh: s, dbg: s}
					w := walker{mem: memory{base: 0x1000, b: make([]byte, 64), lo: 0x1000, hi: 0x2000}}
					var regs regState
					regs.set(regRSP, 0x1000)
					regs.set(regRA, pc)
					w.stepCFI(&r, obj, &regs)
				}
			}
		}
	})
}

// FuzzLoadCFI feeds arbitrary bytes as an ELF file.
func FuzzLoadCFI(f *testing.F) {
	if b, err := os.ReadFile("/bin/true"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := loadCFI(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, pc := range []uint64{0, 0x1000, 0x401000} {
			if fd, sec, err := obj.findFDE(pc); err == nil {
				computeRow(&fd, sec, pc)
			}
		}
	})
}

// FuzzExpr evaluates arbitrary DWARF expressions.
func FuzzExpr(f *testing.F) {
	// glibc's PLT expression and a signal frame's.
	f.Add([]byte{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22})
	f.Add([]byte{0x77, 0xa0, 0x01, 0x06})
	f.Add([]byte{0x2f, 0xfd, 0xff}) // skip backwards: a loop
	f.Fuzz(func(t *testing.T, code []byte) {
		var regs regState
		regs.set(regRSP, 0x1000)
		regs.set(regRA, 0x401000)
		mem := memory{base: 0x1000, b: make([]byte, 256), lo: 0x1000, hi: 0x2000}
		evalExpr(code, &regs, &mem, 0x1100, true)
	})
}

// TestPLTExpression: the CFA expression of a .plt stub, as ld writes it,
// is rsp+8 (+8 more past the stub's push, 11 bytes into an entry).
func TestPLTExpression(t *testing.T) {
	code := []byte{0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22}
	for _, c := range []struct{ rip, want uint64 }{{0x1020, 0x2008}, {0x102a, 0x2008}, {0x102b, 0x2010}, {0x102f, 0x2010}} {
		var regs regState
		regs.set(regRSP, 0x2000)
		regs.set(regRA, c.rip)
		got, err := evalExpr(code, &regs, &memory{}, 0, false)
		if err != nil || got != c.want {
			t.Errorf("rip %#x: CFA %#x, %v; want %#x", c.rip, got, err, c.want)
		}
	}
}
