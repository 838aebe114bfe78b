package symbolize

import (
	"bytes"
	"fmt"
)

// A JIT (the JVM with jcmd Compiler.perfmap or -XX:+DumpPerfMapAtExit, V8 with
// --perf-basic-prof, .NET with DOTNET_PerfMapEnabled, LuaJIT, ...) names the
// code it generates in /tmp/perf-PID.map, one line per function:
//
//	7f3c2d0a1000 1c0 Lcom/example/Pool;::get
//
// start address and size in hex (a "0x" prefix allowed), then the name,
// which may hold spaces. PID is the process's own PID, the one of its PID
// namespace, and /tmp is the process's own /tmp: the file is read as
// /proc/PID/root/tmp/perf-NSPID.map. The file is only ever appended to; a
// later line for the same start address names code compiled there later
// and wins.

// parsePerfMap parses a perf map. A last line without a newline is the JIT
// writing it right now and is left for the next read; any other malformed
// line is an error. More than maxEntries lines is an error too, rather than
// a table that silently lost the newest code.
func parsePerfMap(b []byte, maxEntries int) ([]rawSym, error) {
	var raw []rawSym
	for n := 1; ; n++ {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return raw, nil
		}
		line := b[:i]
		b = b[i+1:]
		if len(line) == 0 {
			continue
		}
		if len(raw) == maxEntries {
			return nil, fmt.Errorf("%w: perf map holds more than %d entries", ErrTooLarge, maxEntries)
		}
		start, rest := cutField(line)
		size, name := cutField(rest)
		s, ok1 := hexField(bytes.TrimPrefix(start, []byte("0x")))
		z, ok2 := hexField(bytes.TrimPrefix(size, []byte("0x")))
		if !ok1 || !ok2 || len(name) == 0 || s+z < s {
			return nil, fmt.Errorf("%w: perf map line %d: %q", ErrParse, n, truncate(line, 120))
		}
		// The newest line of an address must win: rank by position, last lowest.
		raw = append(raw, rawSym{start: s, size: z, name: string(truncate(name, maxName+1)), rank: maxEntries - len(raw)})
	}
}
