package symbolize

import (
	"cmp"
	"slices"
	"strings"
	"unsafe"

	"github.com/ctxtop/ctxtop/internal/sorts"
)

// maxName caps a symbol name as kept. Real names stay far below it (long
// C++ template instantiations reach a few hundred bytes); a longer one is
// cut and marked with "...", never replaced by another name.
const maxName = 1024

// rawSym is a function symbol as a source (an ELF symbol table, pclntab, a
// perf map, kallsyms) gives it, before the table is built.
type rawSym struct {
	start, size uint64
	name        string
	// rank orders symbols sharing a start address: the lowest is kept.
	rank int
	// module is an index into table.modules (kallsyms only).
	module uint16
}

// symbol is one kept function: 16 bytes. Its name is names[off:next.off].
type symbol struct {
	start uint64
	size  uint32
	off   uint32
}

// table is a sorted, deduplicated set of functions with their names packed
// into one string: what the cache keeps per object, and what its byte
// budget counts.
type table struct {
	syms    []symbol
	names   string
	modules []string // kallsyms: "[kernel]", then "[MODULE]" names
	module  []uint16 // kallsyms: per symbol, index into modules
}

// buildTable sorts raw, keeps the best-ranked symbol of each start address
// under the name a Frame shows (displayName: demangled, sanitized, so that
// a lookup neither allocates nor sanitizes again), and gives a symbol without a size (assembly without .size, kallsyms) the
// extent up to the next symbol, at most zeroSizeMax bytes. A last symbol
// without a size keeps none and names no address: nothing says where it
// ends.
func buildTable(raw []rawSym, zeroSizeMax uint64, fullNames bool) table {
	sorts.Func(raw, func(a, b rawSym) int {
		if c := cmp.Compare(a.start, b.start); c != 0 {
			return c
		}
		return cmp.Compare(a.rank, b.rank)
	})
	kept := raw[:0]
	for _, r := range raw {
		if n := len(kept); n > 0 && kept[n-1].start == r.start {
			if kept[n-1].size == 0 {
				kept[n-1].size = r.size
			}
			continue
		}
		kept = append(kept, r)
	}
	var t table
	t.syms = make([]symbol, len(kept))
	total := 0
	for i := range kept {
		kept[i].name = displayName(kept[i].name, fullNames)
		total += min(len(kept[i].name), maxName+3)
	}
	var names strings.Builder
	names.Grow(total)
	for i, r := range kept {
		size := r.size
		if size == 0 && i+1 < len(kept) {
			size = min(kept[i+1].start-r.start, zeroSizeMax)
		}
		t.syms[i] = symbol{start: r.start, size: uint32(min(size, 1<<32-1)), off: uint32(names.Len())}
		if len(r.name) > maxName {
			names.WriteString(r.name[:maxName])
			names.WriteString("...")
		} else {
			names.WriteString(r.name)
		}
	}
	t.names = names.String()
	for i, r := range kept {
		if r.module != 0 {
			if t.module == nil {
				t.module = make([]uint16, len(kept))
			}
			t.module[i] = r.module
		}
	}
	return t
}

// lookup returns the index of the function containing addr, or -1.
func (t *table) lookup(addr uint64) int {
	i, _ := slices.BinarySearchFunc(t.syms, addr, func(s symbol, a uint64) int {
		if s.start > a {
			return 1
		}
		return -1
	})
	i--
	if i < 0 || addr-t.syms[i].start >= uint64(t.syms[i].size) {
		return -1
	}
	return i
}

func (t *table) name(i int) string {
	end := len(t.names)
	if i+1 < len(t.syms) {
		end = int(t.syms[i+1].off)
	}
	return t.names[t.syms[i].off:end]
}

// bytes is the memory the table holds, what the cache budget counts.
func (t *table) bytes() int {
	return len(t.syms)*int(unsafe.Sizeof(symbol{})) + len(t.names) +
		len(t.module)*2 + len(t.modules)*16
}
