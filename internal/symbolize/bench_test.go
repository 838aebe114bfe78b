package symbolize

import (
	"debug/elf"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// jvmRoot is a procfs root holding one JVM-sized process: the machine's
// shared libraries (copied into the process's root) mapped among
// anonymous regions to about 1,000 mappings, and a JIT region named by a
// 100,000-entry perf map.
type jvmRoot struct {
	proc   string
	pid    int
	libs   int
	maps   int
	stacks [][]uint64 // one per thread
}

const (
	benchPID       = 4242
	benchMappings  = 1000
	benchPerfMap   = 100_000
	benchThreads   = 10_000
	benchDepth     = 16
	benchJITStart  = 0x7e0000000000
	benchJITStride = 0x800
)

func newJVMRoot(b *testing.B) *jvmRoot {
	b.Helper()
	r := &jvmRoot{proc: b.TempDir(), pid: benchPID}
	pidDir := filepath.Join(r.proc, fmt.Sprint(r.pid))
	libDir := filepath.Join(pidDir, "root", "usr", "lib")
	tmpDir := filepath.Join(pidDir, "root", "tmp")
	for _, d := range []string{libDir, tmpDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pidDir, "status"), []byte(fmt.Sprintf("Name:\tjava\nNSpid:\t%d\n", r.pid)), 0o644); err != nil {
		b.Fatal(err)
	}
	// A stat line that says it started at boot: its perf map, written
	// below, is its own and not an earlier process's.
	stat := fmt.Sprintf("%d (java) S%s\n", r.pid, strings.Repeat(" 0", 36))
	if err := os.WriteFile(filepath.Join(pidDir, "stat"), []byte(stat), 0o644); err != nil {
		b.Fatal(err)
	}

	// Libraries: the machine's own, up to 60 of at most 8 MiB.
	var candidates []string
	for _, pat := range []string{"/usr/lib/x86_64-linux-gnu/*.so*", "/usr/lib/*/*.so*", "/lib64/*.so*"} {
		m, _ := filepath.Glob(pat)
		candidates = append(candidates, m...)
	}
	sort.Strings(candidates)
	var maps strings.Builder
	var execRanges [][2]uint64
	base := uint64(0x7f0000000000)
	seen := map[string]bool{}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, src := range candidates {
		if r.libs == 60 || seen[filepath.Base(src)] {
			continue
		}
		fi, err := os.Lstat(src)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 8<<20 {
			continue
		}
		ef, err := elf.Open(src)
		if err != nil {
			continue
		}
		var text *elf.Prog
		for _, p := range ef.Progs {
			if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
				text = p
			}
		}
		dyn, _ := ef.DynamicSymbols()
		ef.Close()
		if text == nil || text.Filesz < 0x1000 {
			continue
		}
		var funcs [][2]uint64 // exported functions, where stacks are named
		for _, sym := range dyn {
			if elf.ST_TYPE(sym.Info) == elf.STT_FUNC && sym.Section != elf.SHN_UNDEF && sym.Size > 0 &&
				sym.Value >= text.Vaddr && sym.Value+sym.Size <= text.Vaddr+text.Filesz {
				funcs = append(funcs, [2]uint64{base + sym.Value, base + sym.Value + sym.Size})
			}
		}
		if len(funcs) == 0 {
			continue
		}
		seen[filepath.Base(src)] = true
		dst := filepath.Join(libDir, filepath.Base(src))
		if err := copyFile(src, dst); err != nil {
			b.Fatal(err)
		}
		st, err := os.Stat(dst)
		if err != nil {
			b.Fatal(err)
		}
		ino := st.Sys().(*syscall.Stat_t).Ino
		off := text.Off &^ 0xfff
		start := base + (text.Vaddr &^ 0xfff)
		end := (base + text.Vaddr + text.Filesz + 0xfff) &^ 0xfff
		path := "/usr/lib/" + filepath.Base(src)
		fmt.Fprintf(&maps, "%x-%x r--p 00000000 fd:01 %d %s\n", base, base+0x1000, ino, path)
		fmt.Fprintf(&maps, "%x-%x r-xp %08x fd:01 %d %s\n", start, end, off, ino, path)
		fmt.Fprintf(&maps, "%x-%x rw-p %08x fd:01 %d %s\n", end, end+0x1000, off, ino, path)
		r.maps += 3
		execRanges = append(execRanges, funcs...)
		base = (end + 0x100000) &^ 0xfffff
		r.libs++
	}
	if r.libs < 10 {
		b.Fatalf("only %d shared libraries found to map", r.libs)
	}
	// The JIT's code cache, and anonymous memory (heap, thread stacks,
	// guard pages) up to the mapping count.
	jitEnd := uint64(benchJITStart + benchPerfMap*benchJITStride)
	fmt.Fprintf(&maps, "%x-%x rwxp 00000000 00:00 0 \n", uint64(benchJITStart), jitEnd)
	r.maps++
	for a := uint64(0x7d0000000000); r.maps < benchMappings; a += 0x200000 {
		fmt.Fprintf(&maps, "%x-%x rw-p 00000000 00:00 0 \n", a, a+0x100000)
		r.maps++
	}
	// The kernel prints maps sorted; so does this root.
	lines := strings.Split(strings.TrimSpace(maps.String()), "\n")
	sort.Slice(lines, func(i, j int) bool { return mapStart(lines[i]) < mapStart(lines[j]) })
	if err := os.WriteFile(filepath.Join(pidDir, "maps"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}

	var perf strings.Builder
	for i := range benchPerfMap {
		fmt.Fprintf(&perf, "%x %x Lcom/example/service/Handler%05d;::process%d\n",
			benchJITStart+uint64(i)*benchJITStride, benchJITStride/2, i%20000, i)
	}
	if err := os.WriteFile(filepath.Join(tmpDir, fmt.Sprintf("perf-%d.map", r.pid)), []byte(perf.String()), 0o644); err != nil {
		b.Fatal(err)
	}

	// Stacks: half JIT frames, half exported library functions, innermost
	// first.
	for range benchThreads {
		st := make([]uint64, benchDepth)
		for j := range st {
			if j%2 == 0 {
				xr := execRanges[rng.IntN(len(execRanges))]
				// A return address is never a function's first byte.
				st[j] = xr[0] + 1 + rng.Uint64N(max(xr[1]-xr[0], 2)-1)
			} else {
				st[j] = benchJITStart + rng.Uint64N(benchPerfMap)*benchJITStride + 1 + rng.Uint64N(benchJITStride/2-1)
			}
		}
		r.stacks = append(r.stacks, st)
	}
	return r
}

func mapStart(line string) string {
	s, _, _ := strings.Cut(line, "-")
	return fmt.Sprintf("%016s", s)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkSymbolizeJVM symbolizes one fresh 16-frame stack for each of
// 10,000 threads of one process (about 1,000 mappings, 60 libraries, a
// 100,000-entry perf map) per iteration, with warm caches: one refresh of
// a monitor that names every thread's stack. It reports the time per
// address, the bytes the tables hold by the Symbolizer's own count, and
// the heap the Symbolizer keeps alive as the Go runtime measures it.
func BenchmarkSymbolizeJVM(b *testing.B) {
	r := newJVMRoot(b)
	before := heapInUse()
	s := newSymbolizer(b, Options{Proc: r.proc})
	s.noMapFiles = true // a directory tree has no magic links
	named := 0
	for _, st := range r.stacks {
		frames, err := s.User(r.pid, st, StackAddresses)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range frames {
			if f.Function != "" {
				named++
			}
		}
	}
	if total := len(r.stacks) * benchDepth; named < total*99/100 {
		b.Fatalf("only %d of %d addresses named", named, total)
	}
	held := heapInUse() - before
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, st := range r.stacks {
			if _, err := s.User(r.pid, st, StackAddresses); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	st := s.Stats()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(r.stacks)*benchDepth), "ns/addr")
	b.ReportMetric(float64(st.Bytes()), "table-bytes")
	b.ReportMetric(float64(held), "heap-bytes")
	b.ReportMetric(float64(r.libs), "libs")
	b.ReportMetric(float64(r.maps), "mappings")
	runtime.KeepAlive(s)
}

// BenchmarkSymbolizeJVMCold is the first stack of that process: reading
// its mappings, 60 libraries' symbol tables and the perf map.
func BenchmarkSymbolizeJVMCold(b *testing.B) {
	r := newJVMRoot(b)
	all := make([]uint64, 0, 64*benchDepth)
	for _, st := range r.stacks[:64] {
		all = append(all, st...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s := newSymbolizer(b, Options{Proc: r.proc})
		s.noMapFiles = true
		// Every library is touched by 64 stacks of 8 library frames.
		if _, err := s.User(r.pid, all, ExactAddresses); err != nil {
			b.Fatal(err)
		}
	}
}
