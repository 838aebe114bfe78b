package unwind

import "encoding/binary"

// reader reads the little-endian, LEB128 and pointer-encoded fields of
// CFI. Every read is bounds checked: past the end it returns zero and sets
// bad, so a malformed section ends a parse with an error, never a panic.
type reader struct {
	b   []byte
	off int
	// addr is the virtual address of b[0], the base of pc-relative
	// pointers.
	addr uint64
	bad  bool
}

func (r *reader) left() int { return len(r.b) - r.off }

func (r *reader) take(n int) []byte {
	if n < 0 || r.off+n > len(r.b) || r.off+n < r.off {
		r.bad = true
		r.off = len(r.b)
		return nil
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if b := r.take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.take(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.u8()
		if r.bad {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		c := r.u8()
		if r.bad {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// cstring reads a NUL-terminated string.
func (r *reader) cstring() []byte {
	for i := r.off; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := r.b[r.off:i]
			r.off = i + 1
			return s
		}
	}
	r.bad = true
	r.off = len(r.b)
	return nil
}

// Pointer encodings (DW_EH_PE_*), as .eh_frame and .eh_frame_hdr use them.
const (
	peAbsptr  = 0x00
	peUleb    = 0x01
	peUdata2  = 0x02
	peUdata4  = 0x03
	peUdata8  = 0x04
	peSleb    = 0x09
	peSdata2  = 0x0a
	peSdata4  = 0x0b
	peSdata8  = 0x0c
	pePcrel   = 0x10
	peDatarel = 0x30
	peOmit    = 0xff
)

// ptr reads a pointer in encoding enc; dataBase is the base of datarel
// pointers (.eh_frame_hdr's address). ok is false for an encoding that
// cannot be resolved here (textrel, funcrel, indirect, unknown), but the
// field is still skipped when its size is known, so parsing goes on.
func (r *reader) ptr(enc byte, dataBase uint64) (v uint64, ok bool) {
	if enc == peOmit {
		return 0, false
	}
	at := r.addr + uint64(r.off)
	switch enc & 0x0f {
	case peAbsptr, peUdata8:
		v = r.u64()
	case peUleb:
		v = r.uleb()
	case peUdata2:
		v = uint64(r.u16())
	case peUdata4:
		v = uint64(r.u32())
	case peSleb:
		v = uint64(r.sleb())
	case peSdata2:
		v = uint64(int64(int16(r.u16())))
	case peSdata4:
		v = uint64(int64(int32(r.u32())))
	case peSdata8:
		v = r.u64()
	default:
		r.bad = true
		return 0, false
	}
	if r.bad {
		return 0, false
	}
	switch enc & 0x70 {
	case 0:
	case pePcrel:
		v += at
	case peDatarel:
		v += dataBase
	default:
		return v, false
	}
	if enc&0x80 != 0 { // indirect: the value is in memory we do not have
		return v, false
	}
	return v, true
}
