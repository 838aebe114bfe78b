package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// MiniDebugInfo (.gnu_debugdata) is an ELF file holding a .symtab of the
// local functions, compressed with xz. Go's standard library has no xz,
// and github.com/ulikunitz/xz would add about 370 KB to the binary (it
// brings its encoder along), so this is a decoder of just what
// MiniDebugInfo uses, as xz-embedded (the Linux kernel's) does: xz
// streams of blocks with one LZMA2 filter, decoded into memory.

// errXZ wraps every xz decoding failure.
var errXZ = errors.New("xz")

// maxDebugData caps .gnu_debugdata (Fedora's libc's is 300 KB) and what
// it expands to.
const (
	maxDebugData         = 16 << 20
	maxDebugDataUnpacked = 64 << 20
)

// miniDebugInfo returns the function symbols of ef's MiniDebugInfo; nil
// and no error when the file has none.
func miniDebugInfo(ef *elf.File, capBytes uint64) ([]elf.Symbol, error) {
	sec := ef.Section(".gnu_debugdata")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if sec.Size > maxDebugData {
		return nil, fmt.Errorf("%w: .gnu_debugdata holds %d bytes", ErrTooLarge, sec.Size)
	}
	b, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("%w: .gnu_debugdata: %v", ErrParse, err)
	}
	elfBytes, err := unxz(b, maxDebugDataUnpacked)
	if err != nil {
		return nil, fmt.Errorf("%w: .gnu_debugdata: %v", ErrParse, err)
	}
	return debugFileSymbols(bytes.NewReader(elfBytes), "", capBytes)
}

// unxz decodes an xz stream (and any streams concatenated after it) into
// at most limit bytes. Block checks are not verified (a CRC-32 header
// check is): what comes out is parsed as ELF, which bounds every read.
func unxz(in []byte, limit int) ([]byte, error) {
	var out []byte
	for len(in) > 0 {
		if len(in) < 12 || string(in[:6]) != "\xfd7zXZ\x00" {
			if len(out) > 0 && allZero(in) { // stream padding
				break
			}
			return nil, fmt.Errorf("%w: not an xz stream", errXZ)
		}
		if crc32.ChecksumIEEE(in[6:8]) != binary.LittleEndian.Uint32(in[8:12]) || in[6] != 0 || in[7]&0xf0 != 0 {
			return nil, fmt.Errorf("%w: stream header", errXZ)
		}
		checkSize := xzCheckSize(in[7] & 0x0f)
		in = in[12:]
		for {
			if len(in) == 0 {
				return nil, fmt.Errorf("%w: truncated", errXZ)
			}
			if in[0] == 0 { // the index: no more blocks
				n, err := skipIndexAndFooter(in)
				if err != nil {
					return nil, err
				}
				in = in[n:]
				break
			}
			var err error
			var n int
			out, n, err = xzBlock(in, out, limit)
			if err != nil {
				return nil, err
			}
			if n+checkSize > len(in) {
				return nil, fmt.Errorf("%w: truncated check", errXZ)
			}
			in = in[n+checkSize:]
		}
	}
	return out, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func xzCheckSize(t byte) int {
	switch {
	case t == 0:
		return 0
	case t <= 3:
		return 4
	case t <= 6:
		return 8
	case t <= 9:
		return 16
	case t <= 12:
		return 32
	}
	return 64
}

// skipIndexAndFooter returns the size of the index and the stream footer.
func skipIndexAndFooter(in []byte) (int, error) {
	r := reader{b: in[1:]}
	records := r.varint()
	for i := uint64(0); i < records && !r.bad; i++ {
		r.varint()
		r.varint()
	}
	n := 1 + r.off
	n = (n + 3) &^ 3 // padding
	n += 4           // CRC32
	n += 12          // footer
	if r.bad || n > len(in) || string(in[n-2:n]) != "YZ" {
		return 0, fmt.Errorf("%w: index or footer", errXZ)
	}
	return n, nil
}

// reader is a bounds-checked cursor over xz headers.
type reader struct {
	b   []byte
	off int
	bad bool
}

func (r *reader) byte() byte {
	if r.off >= len(r.b) {
		r.bad = true
		return 0
	}
	r.off++
	return r.b[r.off-1]
}

// varint is xz's multibyte integer: 7 bits a byte, at most 9 bytes.
func (r *reader) varint() uint64 {
	var v uint64
	for i := 0; i < 9; i++ {
		c := r.byte()
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.bad = true
	return 0
}

// xzBlock decodes one block appended to out; n is the block's size up to
// its check field (padding included).
func xzBlock(in, out []byte, limit int) ([]byte, int, error) {
	hsize := (int(in[0]) + 1) * 4
	if hsize > len(in) || crc32.ChecksumIEEE(in[:hsize-4]) != binary.LittleEndian.Uint32(in[hsize-4:hsize]) {
		return nil, 0, fmt.Errorf("%w: block header", errXZ)
	}
	r := reader{b: in[:hsize-4], off: 1}
	flags := r.byte()
	if flags&0x3c != 0 || flags&0x03 != 0 {
		return nil, 0, fmt.Errorf("%w: filters other than LZMA2 alone", errXZ)
	}
	if flags&0x40 != 0 {
		r.varint() // compressed size
	}
	if flags&0x80 != 0 {
		r.varint() // uncompressed size
	}
	if id := r.varint(); id != 0x21 {
		return nil, 0, fmt.Errorf("%w: filter %#x, not LZMA2", errXZ, id)
	}
	if r.varint() != 1 {
		return nil, 0, fmt.Errorf("%w: LZMA2 properties", errXZ)
	}
	r.byte() // dictionary size: the whole output is the dictionary here
	if r.bad {
		return nil, 0, fmt.Errorf("%w: block header", errXZ)
	}
	out, used, err := unlzma2(in[hsize:], out, limit)
	if err != nil {
		return nil, 0, err
	}
	n := hsize + used
	return out, (n + 3) &^ 3, nil
}

// unlzma2 decodes LZMA2 chunks until the end marker; used is the input
// consumed.
func unlzma2(in, out []byte, limit int) ([]byte, int, error) {
	var d lzmaDecoder
	dictStart := len(out)
	needProps := true
	pos := 0
	for {
		if pos >= len(in) {
			return nil, 0, fmt.Errorf("%w: LZMA2 truncated", errXZ)
		}
		c := in[pos]
		pos++
		switch {
		case c == 0:
			return out, pos, nil
		case c == 1 || c == 2:
			if pos+2 > len(in) {
				return nil, 0, fmt.Errorf("%w: LZMA2 truncated", errXZ)
			}
			n := int(binary.BigEndian.Uint16(in[pos:])) + 1
			pos += 2
			if c == 1 {
				dictStart = len(out)
			}
			if pos+n > len(in) || len(out)+n > limit {
				return nil, 0, fmt.Errorf("%w: LZMA2 chunk past the input or the limit", errXZ)
			}
			out = append(out, in[pos:pos+n]...)
			pos += n
		case c >= 0x80:
			if pos+4 > len(in) {
				return nil, 0, fmt.Errorf("%w: LZMA2 truncated", errXZ)
			}
			unpacked := int(c&0x1f)<<16 + int(binary.BigEndian.Uint16(in[pos:])) + 1
			packed := int(binary.BigEndian.Uint16(in[pos+2:])) + 1
			pos += 4
			reset := (c >> 5) & 3
			if reset == 3 {
				dictStart = len(out)
			}
			if reset >= 2 {
				if pos >= len(in) {
					return nil, 0, fmt.Errorf("%w: LZMA2 truncated", errXZ)
				}
				if err := d.setProps(in[pos]); err != nil {
					return nil, 0, err
				}
				pos++
				needProps = false
			}
			if needProps {
				return nil, 0, fmt.Errorf("%w: LZMA chunk without properties", errXZ)
			}
			if reset >= 1 {
				d.reset()
			}
			if pos+packed > len(in) || len(out)+unpacked > limit {
				return nil, 0, fmt.Errorf("%w: LZMA2 chunk past the input or the limit", errXZ)
			}
			var err error
			out, err = d.decode(in[pos:pos+packed], out, dictStart, len(out)+unpacked)
			if err != nil {
				return nil, 0, err
			}
			pos += packed
		default:
			return nil, 0, fmt.Errorf("%w: LZMA2 control byte %#x", errXZ, c)
		}
	}
}

// lzmaDecoder is the LZMA decoder of the LZMA SDK's specification
// (lzma-specification.txt), with the range coder, the probability models
// and the state LZMA2 keeps across chunks.
type lzmaDecoder struct {
	lc, lp, pb uint
	state      int
	rep        [4]int

	literal    []uint16
	isMatch    [12 << 4]uint16
	isRep      [12]uint16
	isRepG0    [12]uint16
	isRepG1    [12]uint16
	isRepG2    [12]uint16
	isRep0Long [12 << 4]uint16
	posSlot    [4][64]uint16
	posSpec    [115]uint16
	align      [16]uint16
	length     lenDecoder
	repLength  lenDecoder

	// range coder
	in        []byte
	inPos     int
	rng, code uint32
	overrun   bool
}

type lenDecoder struct {
	choice, choice2 uint16
	low, mid        [16][8]uint16
	high            [256]uint16
}

func (d *lzmaDecoder) setProps(p byte) error {
	if p >= 9*5*5 {
		return fmt.Errorf("%w: LZMA properties %#x", errXZ, p)
	}
	d.lc, d.lp, d.pb = uint(p%9), uint(p/9%5), uint(p/45)
	if d.lc+d.lp > 4 {
		return fmt.Errorf("%w: LZMA2 lc+lp over 4", errXZ)
	}
	d.literal = make([]uint16, 0x300<<(d.lc+d.lp))
	return nil
}

func (d *lzmaDecoder) reset() {
	d.state = 0
	d.rep = [4]int{}
	fill := func(p []uint16) {
		for i := range p {
			p[i] = 1024
		}
	}
	fill(d.literal)
	fill(d.isMatch[:])
	fill(d.isRep[:])
	fill(d.isRepG0[:])
	fill(d.isRepG1[:])
	fill(d.isRepG2[:])
	fill(d.isRep0Long[:])
	for i := range d.posSlot {
		fill(d.posSlot[i][:])
	}
	fill(d.posSpec[:])
	fill(d.align[:])
	for _, l := range []*lenDecoder{&d.length, &d.repLength} {
		l.choice, l.choice2 = 1024, 1024
		for i := range l.low {
			fill(l.low[i][:])
			fill(l.mid[i][:])
		}
		fill(l.high[:])
	}
}

func (d *lzmaDecoder) next() uint32 {
	if d.inPos >= len(d.in) {
		d.overrun = true
		return 0
	}
	d.inPos++
	return uint32(d.in[d.inPos-1])
}

func (d *lzmaDecoder) normalize() {
	if d.rng < 1<<24 {
		d.rng <<= 8
		d.code = d.code<<8 | d.next()
	}
}

func (d *lzmaDecoder) bit(p *uint16) int {
	bound := (d.rng >> 11) * uint32(*p)
	var b int
	if d.code < bound {
		d.rng = bound
		*p += (2048 - *p) >> 5
	} else {
		d.rng -= bound
		d.code -= bound
		*p -= *p >> 5
		b = 1
	}
	d.normalize()
	return b
}

func (d *lzmaDecoder) tree(p []uint16, bits uint) int {
	m := 1
	for range bits {
		m = m<<1 | d.bit(&p[m])
	}
	return m - 1<<bits
}

func (d *lzmaDecoder) reverse(p []uint16, bits int) int {
	m, sym := 1, 0
	for i := range bits {
		b := d.bit(&p[m])
		m = m<<1 | b
		sym |= b << i
	}
	return sym
}

func (d *lzmaDecoder) direct(bits int) int {
	res := 0
	for range bits {
		d.rng >>= 1
		d.code -= d.rng
		t := 0 - (d.code >> 31)
		d.code += d.rng & t
		d.normalize()
		res = res<<1 + int(t+1)
	}
	return res
}

func (d *lzmaDecoder) lenDecode(l *lenDecoder, posState int) int {
	if d.bit(&l.choice) == 0 {
		return d.tree(l.low[posState][:], 3)
	}
	if d.bit(&l.choice2) == 0 {
		return 8 + d.tree(l.mid[posState][:], 3)
	}
	return 16 + d.tree(l.high[:], 8)
}

// decode runs one LZMA chunk: in is its packed data, out grows to end.
// Matches may reach back to dictStart, never before.
func (d *lzmaDecoder) decode(in, out []byte, dictStart, end int) ([]byte, error) {
	d.in, d.inPos, d.overrun = in, 0, false
	if d.next() != 0 {
		return nil, fmt.Errorf("%w: LZMA range coder start", errXZ)
	}
	d.rng = 0xffffffff
	d.code = 0
	for range 4 {
		d.code = d.code<<8 | d.next()
	}
	corrupt := fmt.Errorf("%w: LZMA data", errXZ)
	for len(out) < end {
		if d.overrun {
			return nil, corrupt
		}
		// Positions count from the dictionary's reset, the start of a block.
		pos := len(out) - dictStart
		posState := pos & (1<<d.pb - 1)
		st := d.state
		if d.bit(&d.isMatch[st<<4+posState]) == 0 {
			prev := 0
			if len(out) > dictStart {
				prev = int(out[len(out)-1])
			}
			lit := d.literal[0x300*((pos&(1<<d.lp-1))<<d.lc+prev>>(8-d.lc)):]
			sym := 1
			if st >= 7 {
				at := len(out) - d.rep[0] - 1
				if at < dictStart {
					return nil, corrupt
				}
				match := int(out[at])
				for sym < 0x100 {
					mb := (match >> 7) & 1
					match <<= 1
					b := d.bit(&lit[(1+mb)<<8+sym])
					sym = sym<<1 | b
					if mb != b {
						break
					}
				}
			}
			for sym < 0x100 {
				sym = sym<<1 | d.bit(&lit[sym])
			}
			out = append(out, byte(sym))
			switch {
			case st < 4:
				d.state = 0
			case st < 10:
				d.state = st - 3
			default:
				d.state = st - 6
			}
			continue
		}
		var n int
		if d.bit(&d.isRep[st]) != 0 {
			if len(out) == dictStart {
				return nil, corrupt
			}
			if d.bit(&d.isRepG0[st]) == 0 {
				if d.bit(&d.isRep0Long[st<<4+posState]) == 0 {
					d.state = 9
					if st >= 7 {
						d.state = 11
					}
					at := len(out) - d.rep[0] - 1
					if at < dictStart {
						return nil, corrupt
					}
					out = append(out, out[at])
					continue
				}
			} else {
				var dist int
				if d.bit(&d.isRepG1[st]) == 0 {
					dist = d.rep[1]
				} else {
					if d.bit(&d.isRepG2[st]) == 0 {
						dist = d.rep[2]
					} else {
						dist = d.rep[3]
						d.rep[3] = d.rep[2]
					}
					d.rep[2] = d.rep[1]
				}
				d.rep[1] = d.rep[0]
				d.rep[0] = dist
			}
			n = d.lenDecode(&d.repLength, posState)
			d.state = 8
			if st >= 7 {
				d.state = 11
			}
		} else {
			d.rep[3], d.rep[2], d.rep[1] = d.rep[2], d.rep[1], d.rep[0]
			n = d.lenDecode(&d.length, posState)
			d.state = 7
			if st >= 7 {
				d.state = 10
			}
			d.rep[0] = d.distance(n)
		}
		n += 2
		at := len(out) - d.rep[0] - 1
		if d.rep[0] < 0 || at < dictStart || len(out)+n > end {
			return nil, corrupt
		}
		for i := range n { // may overlap what it writes: byte by byte
			out = append(out, out[at+i])
		}
	}
	if d.overrun {
		return nil, corrupt
	}
	return out, nil
}

func (d *lzmaDecoder) distance(n int) int {
	slot := d.tree(d.posSlot[min(n, 3)][:], 6)
	if slot < 4 {
		return slot
	}
	bits := slot>>1 - 1
	dist := (2 | slot&1) << bits
	if slot < 14 {
		return dist + d.reverse(d.posSpec[dist-slot:], bits)
	}
	dist += d.direct(bits-4) << 4
	return dist + d.reverse(d.align[:], 4)
}
