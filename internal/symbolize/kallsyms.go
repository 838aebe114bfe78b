package symbolize

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// /proc/kallsyms lists every kernel symbol, one a line:
//
//	ffffffff81e0b4a0 T schedule
//	ffffffffc0a01000 t ext4_fill_super	[ext4]
//
// address, type letter (t/T text, w/W weak, d/D data, ...), name, and for a
// module its name in brackets after a tab. The addresses read as zeros for
// a reader the kernel does not trust with them (kernel.kptr_restrict, no
// CAP_SYSLOG); stacks from BPF still hold the real addresses then, and they
// can only be shown as "kernel symbols hidden".

// maxKallsymsEntries caps the lines kept; a distribution kernel with its
// modules loaded lists about 200,000.
const maxKallsymsEntries = 4 << 20

// maxKernelExtent bounds a kernel function's reach; the largest kernel
// functions are a few tens of kilobytes.
const maxKernelExtent = 1 << 20

// parseKallsyms parses /proc/kallsyms into a function table. hidden is
// true when every address reads zero.
func parseKallsyms(b []byte) (t table, hidden bool, err error) {
	var raw []rawSym
	// Modules are kept as a Frame shows them, "[ext4]", sanitized once.
	modules := []string{"[kernel]"}
	index := map[string]uint16{"": 0}
	zero := true
	lines := 0
	for n := 1; len(b) > 0; n++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) == 0 {
			continue
		}
		if lines++; lines > maxKallsymsEntries {
			return table{}, false, fmt.Errorf("%w: kallsyms holds more than %d lines", ErrTooLarge, maxKallsymsEntries)
		}
		addrF, rest := cutField(line)
		typ, rest := cutField(rest)
		name, module, _ := bytes.Cut(rest, []byte("\t"))
		addr, ok := hexField(addrF)
		if !ok || len(typ) != 1 || len(name) == 0 || bytes.IndexByte(name, ' ') >= 0 {
			return table{}, false, fmt.Errorf("%w: kallsyms line %d: %q", ErrParse, n, truncate(line, 120))
		}
		if addr != 0 {
			zero = false
		}
		switch typ[0] {
		case 't', 'T', 'w', 'W':
		default:
			continue
		}
		mod := uint16(0)
		if len(module) > 0 {
			m := strings.TrimSuffix(strings.TrimPrefix(string(truncate(module, 64+2)), "["), "]")
			k, ok := index[m]
			if !ok {
				if len(modules) == 1<<16-1 {
					return table{}, false, fmt.Errorf("%w: kallsyms names more than %d modules", ErrTooLarge, 1<<16-2)
				}
				k = uint16(len(modules))
				modules = append(modules, "["+sanitize.Name(m)+"]")
				index[m] = k
			}
			mod = k
		}
		s := string(truncate(name, maxName+1))
		underscores := len(s) - len(strings.TrimLeft(s, "_"))
		raw = append(raw, rawSym{start: addr, name: s, module: mod, rank: min(underscores, 9)*1000 + min(len(s), 999)})
	}
	if zero && lines > 0 {
		return table{}, true, nil
	}
	// kallsyms has no sizes: a function reaches to the next symbol, as in
	// the kernel's own lookup, but no further than maxKernelExtent, so the
	// last symbol before a gap (_einittext before the module area) does not
	// claim a gigabyte of addresses.
	t = buildTable(raw, maxKernelExtent, false)
	t.modules = modules
	return t, false, nil
}
