package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
)

// A stripped binary (what distributions ship) keeps only .dynsym, the
// exported functions: libc's start_thread and __futex_abstimed_wait_common
// are local and have no name there. Their names are in a separate debug
// file (Debian's libc6-dbg, Fedora's -debuginfo packages), found as GDB
// finds it:
//
//   - by build id: /usr/lib/debug/.build-id/xx/rest.debug, whose build id
//     must be the binary's;
//   - by .gnu_debuglink, a file name and its CRC-32: next to the binary,
//     in .debug/ next to it, or under /usr/lib/debug/ at the binary's
//     directory; the file's CRC must match;
//   - in the binary's MiniDebugInfo (.gnu_debugdata, Fedora and RHEL): an
//     xz-compressed ELF file holding a .symtab of the local functions;
//   - from a debuginfod server (DEBUGINFOD_URLS), fetched in the
//     background into a bounded cache: a look-up never waits for it.
//
// Each place is looked for inside the process's root (its container's
// files) and then under Options.DebugRoot, the host's root by default.

// debugWant identifies the separate debug file of a binary.
type debugWant struct {
	buildID string
	link    string // .gnu_debuglink's file name, "" if none
	crc     uint32
}

// debugFile is what a search found: an open file, or nothing yet because
// a debuginfod fetch is under way.
type debugFile struct {
	f       *os.File
	source  string
	pending bool
}

// maxDebugFileBytes caps a debug file read (to check its CRC, to read its
// symbol table). libc's is 4 MB; the largest common ones a few hundred.
const maxDebugFileBytes = 2 << 30

// maxDebugLink caps .gnu_debuglink: a file name and a CRC.
const maxDebugLink = 4096

// parseDebugLink reads .gnu_debuglink: a NUL-terminated file name, padding
// to 4 bytes, then the CRC-32 of the debug file.
func parseDebugLink(b []byte, order binary.ByteOrder) (string, uint32, bool) {
	i := bytes.IndexByte(b, 0)
	if i <= 0 {
		return "", 0, false
	}
	name := string(b[:i])
	at := (i + 4) &^ 3
	if at+4 > len(b) || name == "." || name == ".." || bytes.ContainsRune(b[:i], '/') {
		return "", 0, false
	}
	return name, order.Uint32(b[at:]), true
}

// debugSymbols returns the function symbols of ef's separate debug file
// or MiniDebugInfo, and where they came from.
func debugSymbols(ef *elf.File, buildID string, lim objectLimits) ([]elf.Symbol, debugFile, error) {
	want := debugWant{buildID: buildID}
	if sec := ef.Section(".gnu_debuglink"); sec != nil && sec.Size <= maxDebugLink {
		if b, err := sec.Data(); err == nil {
			want.link, want.crc, _ = parseDebugLink(b, ef.ByteOrder)
		}
	}
	found := lim.debug(want)
	if found.f != nil {
		defer found.f.Close()
		syms, err := debugFileSymbols(found.f, buildID, lim.symtabBytes)
		if err != nil {
			return nil, debugFile{}, fmt.Errorf("debug file %s: %w", found.source, err)
		}
		return syms, debugFile{source: found.source}, nil
	}
	syms, err := miniDebugInfo(ef, lim.symtabBytes)
	if syms != nil {
		return syms, debugFile{source: "minidebuginfo"}, err
	}
	return nil, debugFile{pending: found.pending}, err
}

// debugFileSymbols reads a debug file's .symtab, insisting that its build
// id, where both have one, is the binary's.
func debugFileSymbols(r io.ReaderAt, buildID string, capBytes uint64) (syms []elf.Symbol, err error) {
	defer func() {
		if p := recover(); p != nil {
			syms, err = nil, fmt.Errorf("%w: ELF reader failed: %v", ErrParse, p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	if buildID != "" {
		if id := elfBuildID(ef); id != "" && id != buildID {
			return nil, fmt.Errorf("build id %s, not the binary's %s", id, buildID)
		}
	}
	return elfSymbols(ef, elf.SHT_SYMTAB, capBytes)
}

// elfBuildID is the GNU build id of a file from its note sections (a
// debug file keeps them, though its PT_NOTE segment points at nothing).
func elfBuildID(ef *elf.File) string {
	for _, sec := range ef.Sections {
		if sec.Type == elf.SHT_NOTE && sec.Size <= maxNoteBytes {
			if b, err := sec.Data(); err == nil {
				if id := parseBuildID(b, ef.ByteOrder); id != "" {
					return id
				}
			}
		}
	}
	return ""
}

// findDebug is the search of a Symbolizer for the binary mapped by m in
// process pid.
func (s *Symbolizer) findDebug(pid int, m *procMapping) func(debugWant) debugFile {
	roots := []string{filepath.Join(s.opt.Proc, strconv.Itoa(pid), "root"), s.opt.DebugRoot}
	return func(want debugWant) debugFile {
		if len(want.buildID) > 2 {
			p := "/usr/lib/debug/.build-id/" + want.buildID[:2] + "/" + want.buildID[2:] + ".debug"
			for _, root := range roots {
				if f, err := openInRoot(root, p); err == nil {
					return debugFile{f: f, source: "build-id"}
				}
			}
		}
		if want.link != "" {
			dir := path.Dir(m.Path)
			for _, root := range roots {
				for _, p := range []string{
					path.Join(dir, want.link),
					path.Join(dir, ".debug", want.link),
					path.Join("/usr/lib/debug", dir, want.link),
				} {
					if p == path.Clean(m.Path) {
						continue // the binary itself, named as its own debug file
					}
					f, err := openInRoot(root, p)
					if err != nil {
						continue
					}
					if crc, ok := crcOf(f); ok && crc == want.crc {
						return debugFile{f: f, source: "debuglink"}
					}
					f.Close()
				}
			}
		}
		if s.debuginfod != nil && want.buildID != "" {
			p, pending := s.debuginfod.lookup(want.buildID)
			if p != "" {
				if f, err := openRegular(p); err == nil {
					return debugFile{f: f, source: "debuginfod"}
				}
			}
			return debugFile{pending: pending}
		}
		return debugFile{}
	}
}

// crcOf is the CRC-32 (IEEE) of a whole file, as .gnu_debuglink records
// it; a file too large to be a debug file is refused before it is read.
func crcOf(f *os.File) (uint32, bool) {
	st, err := f.Stat()
	if err != nil || st.Size() > maxDebugFileBytes {
		return 0, false
	}
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size())); err != nil {
		return 0, false
	}
	return h.Sum32(), true
}
