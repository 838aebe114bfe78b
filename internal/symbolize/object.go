package symbolize

import (
	"debug/elf"
	"debug/gosym"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"
)

// segment is one PT_LOAD program header: the file range [off, off+filesz)
// appears at virtual address vaddr (before the load bias).
type segment struct {
	off, filesz, vaddr uint64
}

// object is what the cache keeps per mapped file: enough to turn a file
// offset into the ELF virtual address its tools (nm, addr2line, objdump)
// use, the build id, and the function table.
type object struct {
	keys     []string // every cache key that leads here
	buildID  string   // hex GNU build id, "" when the file has none
	segments []segment
	syms     table
	// symErr says why the file has no usable function table (too large,
	// malformed), for callers that want to tell "stripped" from "refused".
	symErr error
	// debugSource says where local names came from besides the file:
	// "" (nowhere), "build-id", "debuglink", "minidebuginfo",
	// "debuginfod"; debugPending that a debuginfod fetch is under way.
	debugSource  string
	debugPending bool
}

// bytes is what the object costs the cache.
func (o *object) bytes() int {
	n := int(unsafe.Sizeof(*o)) + len(o.buildID) + len(o.segments)*int(unsafe.Sizeof(segment{})) + o.syms.bytes()
	for _, k := range o.keys {
		n += len(k) + 16
	}
	return n
}

// vaddr turns an offset in the file into the ELF virtual address of the
// byte there: the PT_LOAD segment holding that offset says where it was
// linked. Non-PIE executables, PIE executables and shared libraries all
// work the same way; the load bias never has to be known.
func (o *object) vaddr(fileOff uint64) (uint64, bool) {
	for _, s := range o.segments {
		if fileOff >= s.off && fileOff-s.off < s.filesz {
			return s.vaddr + (fileOff - s.off), true
		}
	}
	return 0, false
}

// Symbol sources, in the order a name is preferred when two share an
// address: the Go runtime's own table first (it is what the runtime prints
// in a panic), then .symtab, then .dynsym.
const (
	rankPclntab = 0
	rankSymtab  = 100_000
	rankDynsym  = 200_000
)

// objectLimits bound what one file may cost while it is read.
type objectLimits struct {
	symtabBytes  uint64 // one .symtab or .dynsym section (and its strings)
	pclntabBytes uint64 // .gopclntab
	fullNames    bool   // C++ names with argument lists
	// debug finds a separate debug file for a file without .symtab (nil:
	// none is looked for); see debugfile.go.
	debug func(want debugWant) debugFile
}

// maxNoteBytes caps a PT_NOTE segment read for the build id; real ones
// hold a few notes of under 100 bytes.
const maxNoteBytes = 64 << 10

// loadObject reads an ELF file's segments, build id and function symbols.
// The file comes from a process's mappings and may have been crafted by
// anyone who can make a process map it, so every section read is bounded
// first, and a panic inside debug/elf or debug/gosym on a malformed file
// becomes an error instead of ending the monitor.
func loadObject(r io.ReaderAt, lim objectLimits) (obj *object, err error) {
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("%w: ELF reader failed: %v", ErrParse, p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrParse, err)
	}
	obj = &object{}
	for _, p := range ef.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			obj.segments = append(obj.segments, segment{off: p.Off, filesz: p.Filesz, vaddr: p.Vaddr})
		case elf.PT_NOTE:
			if obj.buildID == "" && p.Filesz <= maxNoteBytes {
				b := make([]byte, p.Filesz)
				if _, err := p.ReadAt(b, 0); err == nil {
					obj.buildID = parseBuildID(b, ef.ByteOrder)
				}
			}
		}
	}
	// The Go linker's PT_NOTE segment holds only its own build id note, and
	// its GNU build id sits in a note section outside it: look there too.
	for _, sec := range ef.Sections {
		if obj.buildID == "" && sec.Type == elf.SHT_NOTE && sec.Size <= maxNoteBytes {
			if b, err := sec.Data(); err == nil {
				obj.buildID = parseBuildID(b, ef.ByteOrder)
			}
		}
	}
	var raw []rawSym
	var errs []error
	symtab, err := elfSymbols(ef, elf.SHT_SYMTAB, lim.symtabBytes)
	if err != nil {
		errs = append(errs, err)
	}
	raw = appendFuncs(raw, symtab, rankSymtab)
	if symtab == nil && lim.debug != nil {
		// Stripped, as distributions ship: the local functions (libc's
		// start_thread, __futex_abstimed_wait_common) are in a separate
		// debug file, or in the MiniDebugInfo the file carries.
		dsyms, src, err := debugSymbols(ef, obj.buildID, lim)
		if err != nil {
			errs = append(errs, err)
		}
		raw = appendFuncs(raw, dsyms, rankSymtab)
		obj.debugSource, obj.debugPending = src.source, src.pending
	}
	dynsym, err := elfSymbols(ef, elf.SHT_DYNSYM, lim.symtabBytes)
	if err != nil {
		errs = append(errs, err)
	}
	raw = appendFuncs(raw, dynsym, rankDynsym)
	gofuncs, err := goFuncs(ef, symtab, lim.pclntabBytes)
	if err != nil {
		errs = append(errs, err)
	}
	raw = append(raw, gofuncs...)
	obj.syms = buildTable(raw, maxSizelessExtent, lim.fullNames)
	obj.symErr = errors.Join(errs...)
	return obj, nil
}

// maxSizelessExtent is how far a function symbol without a size (hand-written
// assembly without .size) may reach towards the next symbol.
const maxSizelessExtent = 64 << 10

// elfSymbols reads the symbol table of the given type, or nothing when the
// file has none. A table (or its string table) above the cap is refused.
func elfSymbols(ef *elf.File, typ elf.SectionType, capBytes uint64) ([]elf.Symbol, error) {
	sec := ef.SectionByType(typ)
	if sec == nil {
		return nil, nil
	}
	size := sec.Size
	if int(sec.Link) < len(ef.Sections) {
		size += ef.Sections[sec.Link].Size
	}
	if size > capBytes {
		return nil, fmt.Errorf("%w: %s and its strings hold %d bytes, over the %d-byte cap", ErrTooLarge, sec.Name, size, capBytes)
	}
	var syms []elf.Symbol
	var err error
	if typ == elf.SHT_SYMTAB {
		syms, err = ef.Symbols()
	} else {
		syms, err = ef.DynamicSymbols()
	}
	if err != nil && !errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("%w: %s: %v", ErrParse, sec.Name, err)
	}
	return syms, nil
}

// appendFuncs adds the defined function symbols. Among aliases of one
// address (glibc's read, __read, __libc_read) the public spelling wins:
// fewer leading underscores, then global over weak over local, then the
// shorter name.
func appendFuncs(raw []rawSym, syms []elf.Symbol, rank int) []rawSym {
	for _, s := range syms {
		t := elf.ST_TYPE(s.Info)
		if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || s.Section == elf.SHN_UNDEF || s.Value == 0 || s.Name == "" {
			continue
		}
		name := s.Name
		// A debug file's .symtab spells versioned symbols as the
		// assembler saw them, "pthread_cond_wait@@GLIBC_2.3.2"; the
		// version is not part of the function's name.
		if at := strings.IndexByte(name, '@'); at > 0 {
			name = name[:at]
		}
		underscores := len(name) - len(strings.TrimLeft(name, "_"))
		bind := 2
		switch elf.ST_BIND(s.Info) {
		case elf.STB_GLOBAL:
			bind = 0
		case elf.STB_WEAK:
			bind = 1
		}
		raw = append(raw, rawSym{
			start: s.Value, size: s.Size, name: name,
			rank: rank + min(underscores, 9)*10_000 + bind*1_000 + min(len(name), 999),
		})
	}
	return raw
}

// goFuncs reads the Go runtime's function table (pclntab), which every Go
// binary keeps because the runtime needs it for stack traces: it names Go
// functions even in a binary linked with -ldflags=-s -w. It is found as the
// .gopclntab section, which the Go linker writes for executables, PIE or
// not, stripped or not; failing that, between the runtime.pclntab and
// runtime.epclntab symbols of an unstripped binary. The start of the text
// the table's offsets count from is runtime.text when the symbol table is
// there, else the address the table's own header holds for a non-PIE
// executable (Go 1.18 and later), else the .text section. Not found: an
// externally linked (cgo) stripped binary whose linker dropped the section
// name, Go before 1.2. Inlined calls are not expanded: a frame names the
// function the code was compiled into.
func goFuncs(ef *elf.File, symtab []elf.Symbol, capBytes uint64) ([]rawSym, error) {
	data, err := pclntab(ef, symtab, capBytes)
	if data == nil || err != nil {
		return nil, err
	}
	text := uint64(0)
	for _, s := range symtab {
		if s.Name == "runtime.text" {
			text = s.Value
			break
		}
	}
	if text == 0 && ef.Type == elf.ET_EXEC {
		text = pclntabText(data)
	}
	if sec := ef.Section(".text"); text == 0 && sec != nil {
		text = sec.Addr
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text))
	if err != nil {
		return nil, fmt.Errorf("%w: pclntab: %v", ErrParse, err)
	}
	raw := make([]rawSym, 0, len(tab.Funcs))
	for _, f := range tab.Funcs {
		if f.Sym == nil || f.End <= f.Entry {
			continue
		}
		raw = append(raw, rawSym{start: f.Entry, size: f.End - f.Entry, name: f.Name, rank: rankPclntab})
	}
	return raw, nil
}

func pclntab(ef *elf.File, symtab []elf.Symbol, capBytes uint64) ([]byte, error) {
	if sec := ef.Section(".gopclntab"); sec != nil && sec.Type != elf.SHT_NOBITS {
		if sec.Size > capBytes {
			return nil, fmt.Errorf("%w: .gopclntab holds %d bytes, over the %d-byte cap", ErrTooLarge, sec.Size, capBytes)
		}
		b, err := sec.Data()
		if err != nil {
			return nil, fmt.Errorf("%w: .gopclntab: %v", ErrParse, err)
		}
		return b, nil
	}
	var start, end uint64
	for _, s := range symtab {
		switch s.Name {
		case "runtime.pclntab":
			start = s.Value
		case "runtime.epclntab":
			end = s.Value
		}
	}
	if start == 0 || end <= start {
		return nil, nil
	}
	if end-start > capBytes {
		return nil, fmt.Errorf("%w: runtime.pclntab holds %d bytes, over the %d-byte cap", ErrTooLarge, end-start, capBytes)
	}
	for _, sec := range ef.Sections {
		if sec.Type != elf.SHT_NOBITS && start >= sec.Addr && end <= sec.Addr+sec.Size {
			b := make([]byte, end-start)
			if _, err := sec.ReadAt(b, int64(start-sec.Addr)); err != nil {
				return nil, fmt.Errorf("%w: runtime.pclntab: %v", ErrParse, err)
			}
			return b, nil
		}
	}
	return nil, nil
}

// pclntabText reads textStart from a Go 1.18+ pclntab header: magic (4
// bytes), two pad bytes, minimum instruction size, pointer size, then
// nfunc, nfiles and textStart, each pointer-sized. Zero when the header is
// of another version.
func pclntabText(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	magic := binary.LittleEndian.Uint32(b)
	if magic != 0xfffffff0 && magic != 0xfffffff1 {
		return 0
	}
	switch ptr := int(b[7]); {
	case ptr == 8 && len(b) >= 8+3*8:
		return binary.LittleEndian.Uint64(b[8+2*8:])
	case ptr == 4 && len(b) >= 8+3*4:
		return uint64(binary.LittleEndian.Uint32(b[8+2*4:]))
	}
	return 0
}

// parseBuildID finds the GNU build id (note name "GNU", type
// NT_GNU_BUILD_ID = 3) among the notes of a PT_NOTE segment and returns it
// in hex, as `readelf -n` and `file` print it; "" when there is none or the
// notes are malformed.
func parseBuildID(b []byte, order binary.ByteOrder) string {
	const ntGNUBuildID = 3
	for len(b) >= 12 {
		namesz := uint64(order.Uint32(b))
		descsz := uint64(order.Uint32(b[4:]))
		typ := order.Uint32(b[8:])
		b = b[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := nameEnd + (descsz+3)&^3
		if descEnd > uint64(len(b)) {
			return ""
		}
		if typ == ntGNUBuildID && namesz == 4 && string(b[:4]) == "GNU\x00" && descsz > 0 && descsz <= 64 {
			return hex.EncodeToString(b[nameEnd : nameEnd+descsz])
		}
		b = b[descEnd:]
	}
	return ""
}
