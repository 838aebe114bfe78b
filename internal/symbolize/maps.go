package symbolize

import (
	"bytes"
	"fmt"
)

// Mapping is one line of /proc/PID/maps:
//
//	55d0c5c2a000-55d0c5c2c000 r-xp 00002000 fd:01 1234567    /usr/bin/cat
//
// the address range [Start, End), the permissions, the offset in the file
// the range starts at, the file's device (major:minor, hex) and inode, and
// the path the kernel prints for it: a file path (relative to the reader's
// root, with a newline in a name escaped as "\012" and " (deleted)" appended
// once the file is unlinked), a pseudo name such as "[vdso]", "[heap]" or
// "[anon:NAME]", or nothing for anonymous memory (JIT code lives there).
type Mapping struct {
	Start, End uint64
	// Perms is the permission column: read, write, exec, then 'p'
	// (private) or 's' (shared).
	Perms        [4]byte
	Offset       uint64
	Major, Minor uint32
	Inode        uint64
	Path         string
	// Deleted is the " (deleted)" suffix, trimmed from Path.
	Deleted bool
}

// Exec reports whether the range is mapped executable: the only ranges a
// stack's instruction addresses can fall in.
func (m Mapping) Exec() bool { return m.Perms[2] == 'x' }

// FileBacked reports whether the range maps a file, as opposed to anonymous
// memory or a kernel pseudo mapping such as [vdso].
func (m Mapping) FileBacked() bool {
	return m.Inode != 0 && len(m.Path) > 0 && m.Path[0] == '/'
}

// maxMapsPath caps a mapping's path: PATH_MAX is 4,096 bytes, and the
// kernel's escaping of a newline as "\012" can at most quadruple a name.
const maxMapsPath = 4 * 4096

// ParseMaps parses the contents of /proc/PID/maps, as parseMaps below,
// for the unwinder, which needs every mapping (the stack's among them).
func ParseMaps(b []byte) ([]Mapping, error) { return parseMaps(b) }

// parseMaps parses the contents of /proc/PID/maps. An empty file (a kernel
// thread, a zombie) is no mappings and no error. A line that does not have
// the shape above is an error naming the line, so junk never becomes a
// range an address could be attributed to.
func parseMaps(b []byte) ([]Mapping, error) {
	var out []Mapping
	for n := 1; len(b) > 0; n++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		m, ok := parseMapsLine(line)
		if !ok {
			return nil, fmt.Errorf("%w: maps line %d: %q", ErrParse, n, truncate(line, 120))
		}
		out = append(out, m)
	}
	return out, nil
}

func parseMapsLine(line []byte) (Mapping, bool) {
	var m Mapping
	var f []byte
	f, line = cutField(line)
	dash := bytes.IndexByte(f, '-')
	if dash < 0 {
		return m, false
	}
	var ok1, ok2 bool
	m.Start, ok1 = hexField(f[:dash])
	m.End, ok2 = hexField(f[dash+1:])
	if !ok1 || !ok2 || m.End <= m.Start {
		return m, false
	}
	f, line = cutField(line)
	if len(f) != 4 {
		return m, false
	}
	copy(m.Perms[:], f)
	for i, allowed := range [4]string{"r-", "w-", "x-", "ps"} {
		if bytes.IndexByte([]byte(allowed), m.Perms[i]) < 0 {
			return m, false
		}
	}
	f, line = cutField(line)
	if m.Offset, ok1 = hexField(f); !ok1 {
		return m, false
	}
	f, line = cutField(line)
	colon := bytes.IndexByte(f, ':')
	if colon < 0 {
		return m, false
	}
	major, ok1 := hexField(f[:colon])
	minor, ok2 := hexField(f[colon+1:])
	if !ok1 || !ok2 || major > 1<<12 || minor > 1<<20 {
		return m, false
	}
	m.Major, m.Minor = uint32(major), uint32(minor)
	f, line = cutField(line)
	if m.Inode, ok1 = decField(f); !ok1 {
		return m, false
	}
	// The path is everything after the padding, spaces inside it included.
	line = bytes.TrimLeft(line, " ")
	if len(line) > maxMapsPath {
		return m, false
	}
	if p, ok := bytes.CutSuffix(line, []byte(" (deleted)")); ok {
		line, m.Deleted = p, true
	}
	m.Path = string(line)
	return m, true
}

// cutField returns the text before the next single space and the rest.
func cutField(b []byte) (field, rest []byte) {
	if i := bytes.IndexByte(b, ' '); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// hexField parses 1–16 hex digits without a prefix, as maps writes them.
func hexField(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | uint64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// decField parses 1–19 decimal digits (below 10^19, so no overflow).
func decField(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
