package unwind

import (
	"debug/elf"
	"errors"
	"io"
	"sort"
	"unsafe"
)

// ErrParse is what every malformed-CFI error is (errors.Is).
var ErrParse = errors.New("malformed")

// cfiError is a malformed-CFI error. A constant string, not fmt.Errorf with
// the offset: each formatted error cost the binary a few hundred bytes,
// and Stack.Object already says which file's CFI is bad.
type cfiError string

func (e cfiError) Error() string        { return "malformed CFI: " + string(e) }
func (e cfiError) Is(target error) bool { return target == ErrParse }

// errNoFDE means no FDE covers the address: not an error of the file.
var errNoFDE = errors.New("no FDE covers the address")

// maxSectionBytes caps one .eh_frame, .eh_frame_hdr or .debug_frame read:
// libc's .eh_frame is 150 KB, the largest seen (a browser) about 20 MB.
const maxSectionBytes = 64 << 20

// segment is one PT_LOAD program header: the file range [off, off+filesz)
// is linked at vaddr.
type segment struct {
	off, filesz, vaddr uint64
}

// fdeEntry is one line of an FDE index: the first address the FDE covers
// and the FDE's offset in its section.
type fdeEntry struct {
	start uint64
	off   uint32
}

// section is .eh_frame or .debug_frame: its bytes, address and, when it
// had to be built by a scan, a sorted index of its FDEs.
type section struct {
	data  []byte
	addr  uint64
	debug bool // .debug_frame: CIE ids are 0xffffffff and absolute offsets
	index []fdeEntry
}

// cfiObject is what the unwinder keeps per file: its load segments (file
// offset to link-time address), its .eh_frame with the binary search
// table of .eh_frame_hdr, and .debug_frame where the file has one.
type cfiObject struct {
	key      string
	segments []segment
	eh       section
	// hdr is .eh_frame_hdr's table of (initial location, FDE address)
	// pairs, both int32 relative to hdrAddr (the only encoding linkers
	// write, DW_EH_PE_datarel|DW_EH_PE_sdata4); nil when absent or
	// encoded otherwise, and eh.index is scanned instead.
	hdr     []byte
	hdrAddr uint64
	dbg     section
}

func (o *cfiObject) bytes() int {
	return int(unsafe.Sizeof(*o)) + len(o.key) + len(o.segments)*24 +
		len(o.eh.data) + len(o.eh.index)*16 + len(o.hdr) + len(o.dbg.data) + len(o.dbg.index)*16
}

// vaddr turns an offset in the file into its link-time address.
func (o *cfiObject) vaddr(fileOff uint64) (uint64, bool) {
	for _, s := range o.segments {
		if fileOff >= s.off && fileOff-s.off < s.filesz {
			return s.vaddr + (fileOff - s.off), true
		}
	}
	return 0, false
}

// loadCFI reads a file's segments and CFI sections. The file comes from a
// process's mappings and may be crafted: sections are size-checked before
// they are read, and a panic inside debug/elf becomes an error.
func loadCFI(r io.ReaderAt) (obj *cfiObject, err error) {
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, cfiError("ELF reader failed")
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, cfiError("not an ELF file")
	}
	if ef.Machine != elf.EM_X86_64 || ef.Class != elf.ELFCLASS64 {
		return nil, cfiError("only x86-64 is unwound")
	}
	obj = &cfiObject{}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			obj.segments = append(obj.segments, segment{off: p.Off, filesz: p.Filesz, vaddr: p.Vaddr})
		}
	}
	read := func(name string) ([]byte, uint64, error) {
		sec := ef.Section(name)
		if sec == nil || sec.Type == elf.SHT_NOBITS {
			return nil, 0, nil
		}
		if sec.Size > maxSectionBytes {
			return nil, 0, cfiError("a CFI section too large")
		}
		b, err := sec.Data()
		if err != nil {
			return nil, 0, cfiError("a CFI section unreadable")
		}
		if len(b) > maxSectionBytes || len(b) >= 1<<32 {
			return nil, 0, cfiError("a CFI section too large")
		}
		return b, sec.Addr, nil
	}
	if obj.eh.data, obj.eh.addr, err = read(".eh_frame"); err != nil {
		return nil, err
	}
	if obj.dbg.data, obj.dbg.addr, err = read(".debug_frame"); err != nil {
		return nil, err
	}
	obj.dbg.debug = true
	hdr, hdrAddr, err := read(".eh_frame_hdr")
	if err != nil {
		return nil, err
	}
	obj.hdr, obj.hdrAddr = hdrTable(hdr, hdrAddr, obj.eh.addr)
	if obj.hdr == nil && len(obj.eh.data) > 0 {
		obj.eh.index = scanFDEs(&obj.eh)
	}
	if len(obj.dbg.data) > 0 {
		obj.dbg.index = scanFDEs(&obj.dbg)
	}
	return obj, nil
}

// hdrTable checks .eh_frame_hdr (version 1, a table encoded datarel
// sdata4, pointing at the .eh_frame found) and returns its table, or nil.
func hdrTable(b []byte, addr, ehAddr uint64) ([]byte, uint64) {
	r := reader{b: b, addr: addr}
	version, ptrEnc, countEnc, tableEnc := r.u8(), r.u8(), r.u8(), r.u8()
	if r.bad || version != 1 || tableEnc != peDatarel|peSdata4 {
		return nil, 0
	}
	eh, ok := r.ptr(ptrEnc, addr)
	if !ok || eh != ehAddr {
		return nil, 0
	}
	count, ok := r.ptr(countEnc, addr)
	if !ok || count > uint64(r.left()/8) {
		return nil, 0
	}
	return b[r.off : r.off+int(count)*8], addr
}

// scanFDEs walks a section's entries and indexes its FDEs by the first
// address each covers; an entry that does not parse ends the scan (what
// came before it is kept).
func scanFDEs(s *section) []fdeEntry {
	var idx []fdeEntry
	for off := 0; off < len(s.data); {
		e, next, err := entryAt(s, off)
		if err != nil || next <= off {
			break
		}
		if e.fde {
			if f, err := parseFDE(s, off); err == nil && f.end > f.start {
				idx = append(idx, fdeEntry{start: f.start, off: uint32(off)})
			}
		}
		off = next
	}
	// sort.Slice and sort.Search rather than the generic slices
	// functions: each generic instantiation for a new type costs the
	// binary a few KB.
	sort.Slice(idx, func(i, j int) bool { return idx[i].start < idx[j].start })
	return idx
}

// entry is a CIE or FDE header: its body and, for an FDE, the offset of
// its CIE.
type entry struct {
	fde    bool
	body   reader // after the id field
	cieOff int
}

// entryAt reads the length and id of the entry at off and returns it with
// the offset of the next entry.
func entryAt(s *section, off int) (entry, int, error) {
	r := reader{b: s.data, off: off, addr: s.addr}
	length := uint64(r.u32())
	if length == 0xffffffff {
		length = r.u64()
	}
	if r.bad {
		return entry{}, 0, cfiError("entry: truncated length")
	}
	if length == 0 { // .eh_frame's terminator
		return entry{}, len(s.data), nil
	}
	start := r.off
	if length > uint64(r.left()) {
		return entry{}, 0, cfiError("entry: length past the section")
	}
	end := start + int(length)
	idAt := r.off
	id := uint64(r.u32())
	if r.bad {
		return entry{}, 0, cfiError("entry: truncated id")
	}
	e := entry{body: reader{b: s.data[:end], off: r.off, addr: s.addr}}
	switch {
	case s.debug && id == 0xffffffff, !s.debug && id == 0:
		return e, end, nil
	case s.debug:
		e.fde, e.cieOff = true, int(id)
	default:
		// .eh_frame: the CIE pointer counts back from the field itself.
		if id > uint64(idAt) {
			return entry{}, 0, cfiError("FDE: CIE pointer before the section")
		}
		e.fde, e.cieOff = true, idAt-int(id)
	}
	return e, end, nil
}

// cie is what an FDE takes from its CIE.
type cie struct {
	codeAlign uint64
	dataAlign int64
	raReg     uint64
	fdeEnc    byte
	lsdaEnc   byte
	aug       bool // 'z': FDEs carry augmentation data with its length
	signal    bool // 'S': frames of this CIE are signal frames
	initial   []byte
}

func parseCIE(s *section, off int) (cie, error) {
	e, _, err := entryAt(s, off)
	if err != nil {
		return cie{}, err
	}
	if e.fde {
		return cie{}, cfiError("is an FDE, not a CIE")
	}
	r := &e.body
	c := cie{fdeEnc: peAbsptr, lsdaEnc: peOmit}
	version := r.u8()
	if version != 1 && version != 3 && version != 4 {
		return cie{}, cfiError("CIE: version")
	}
	augStr := r.cstring()
	if version == 4 {
		if addrSize, segSize := r.u8(), r.u8(); addrSize != 8 || segSize != 0 {
			return cie{}, cfiError("CIE: address size")
		}
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if version == 1 {
		c.raReg = uint64(r.u8())
	} else {
		c.raReg = r.uleb()
	}
	if len(augStr) > 0 && augStr[0] == 'z' {
		c.aug = true
		n := r.uleb()
		if n > uint64(r.left()) {
			return cie{}, cfiError("CIE: augmentation data past the entry")
		}
		data := reader{b: r.b[:r.off+int(n)], off: r.off, addr: r.addr}
		r.off += int(n)
		for _, a := range augStr[1:] {
			switch a {
			case 'R':
				c.fdeEnc = data.u8()
			case 'L':
				c.lsdaEnc = data.u8()
			case 'P':
				data.ptr(data.u8(), 0) // the personality routine: not needed
			case 'S':
				c.signal = true
			case 'B', 'G': // AArch64 pointer auth, memory tagging: no data
			default:
				return cie{}, cfiError("CIE: augmentation")
			}
		}
		if data.bad {
			return cie{}, cfiError("CIE: augmentation data")
		}
	} else if len(augStr) > 0 && string(augStr) != "eh" {
		return cie{}, cfiError("CIE: augmentation")
	}
	if r.bad || c.codeAlign == 0 {
		return cie{}, cfiError("CIE: truncated")
	}
	c.initial = r.b[r.off:]
	return c, nil
}

// fde is a parsed FDE: the range it covers and its instructions.
type fde struct {
	cie          cie
	start, end   uint64
	instructions []byte
	instrAddr    uint64 // address of instructions[0], for set_loc's pcrel
}

func parseFDE(s *section, off int) (fde, error) {
	e, _, err := entryAt(s, off)
	if err != nil {
		return fde{}, err
	}
	if !e.fde {
		return fde{}, cfiError("is a CIE, not an FDE")
	}
	if e.cieOff < 0 || e.cieOff >= len(s.data) {
		return fde{}, cfiError("FDE: CIE pointer outside the section")
	}
	c, err := parseCIE(s, e.cieOff)
	if err != nil {
		return fde{}, err
	}
	r := &e.body
	f := fde{cie: c}
	enc := c.fdeEnc
	if s.debug {
		enc = peUdata8
	}
	var ok bool
	f.start, ok = r.ptr(enc, 0)
	// The range is a length: the encoding's size, never its base.
	n, _ := r.ptr(enc&0x0f, 0)
	if r.bad || !ok {
		return fde{}, cfiError("FDE: address")
	}
	f.end = f.start + n
	if f.end < f.start {
		return fde{}, cfiError("FDE: range wraps")
	}
	if c.aug {
		n := r.uleb()
		r.take(int(min(n, uint64(len(r.b)+1))))
	}
	if r.bad {
		return fde{}, cfiError("FDE: truncated")
	}
	f.instructions = r.b[r.off:]
	f.instrAddr = r.addr + uint64(r.off)
	return f, nil
}

// findFDE returns the FDE covering the link-time address pc and the
// section it is in.
func (o *cfiObject) findFDE(pc uint64) (fde, *section, error) {
	if o.hdr != nil {
		off, ok := o.searchHdr(pc)
		if ok {
			f, err := parseFDE(&o.eh, off)
			if err == nil && pc >= f.start && pc < f.end {
				return f, &o.eh, nil
			}
			if err != nil {
				return fde{}, nil, err
			}
		}
	} else if f, err := searchIndex(&o.eh, pc); err != errNoFDE {
		return f, &o.eh, err
	}
	f, err := searchIndex(&o.dbg, pc)
	return f, &o.dbg, err
}

// searchHdr binary-searches .eh_frame_hdr's table for the last entry at or
// before pc and returns its FDE's offset in .eh_frame.
func (o *cfiObject) searchHdr(pc uint64) (int, bool) {
	n := len(o.hdr) / 8
	at := func(i int) uint64 {
		return o.hdrAddr + uint64(int64(int32(leU32(o.hdr[i*8:]))))
	}
	lo, hi := 0, n // find the first entry > pc
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if at(m) <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return 0, false
	}
	fdeAddr := o.hdrAddr + uint64(int64(int32(leU32(o.hdr[(lo-1)*8+4:]))))
	off := fdeAddr - o.eh.addr
	if fdeAddr < o.eh.addr || off >= uint64(len(o.eh.data)) {
		return 0, false
	}
	return int(off), true
}

func searchIndex(s *section, pc uint64) (fde, error) {
	i := sort.Search(len(s.index), func(i int) bool { return s.index[i].start > pc })
	// Nested or overlapping FDEs are rare; look back a few entries.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		f, err := parseFDE(s, int(s.index[j].off))
		if err == nil && pc >= f.start && pc < f.end {
			return f, nil
		}
	}
	return fde{}, errNoFDE
}

func leU32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
