// Package zstdenc writes Zstandard frames (RFC 8878) that any zstd decoder
// reads: a hash-table match finder that tries the last offset first and
// looks one byte ahead, Huffman-coded literals and each block's own
// sequence tables where they beat the predefined ones.
// It exists for the recorder's chunks: klauspost/compress's encoder links
// every compression level and its dictionary variants, some 230 KB of a
// binary that has a budget, to compress a few hundred kilobytes every few
// seconds. On recordings it comes within about a percent of that encoder's
// default level, either way (docs/record-replay.md); klauspost/compress
// still decodes them.
package zstdenc

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

const (
	magic = 0xFD2FB528
	// blockMax is the largest block the format allows.
	blockMax = 128 << 10
	// minMatch is the shortest match worth a sequence: a 4-byte hash
	// finds it, and shorter ones rarely pay for their codes.
	minMatch = 4
	hashLog  = 16
)

// Encoder compresses whole buffers into single frames. Its tables are
// reused between calls, so a steady caller allocates only when its output
// grows. An Encoder is not safe for concurrent use.
type Encoder struct {
	table  [1 << hashLog]int32 // position+1 of the last 4 bytes hashing here
	rep    [3]uint32           // the decoder's repeated offsets
	lits   []byte
	seqs   []seq
	huff   huffman
	codes  [][3]uint8 // each sequence's literal length, offset and match length codes
	tables [3]fseTable
	bw     bitWriter
}

// seq is one sequence: lit literals, then a match of ml bytes whose
// offset is coded as off (see offsetValue).
type seq struct {
	lit, ml, off uint32
}

// EncodeAll appends the frame of src to dst. src must be shorter than
// 2 GiB (positions are kept in 32 bits); the recorder's chunks are at most
// a few MiB.
func (e *Encoder) EncodeAll(src, dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, magic)
	// Single segment, no checksum, no dictionary: the window is the
	// content, whose size is given in the smallest field that holds it.
	n := uint64(len(src))
	switch {
	case n < 256:
		dst = append(dst, 0<<6|1<<5, byte(n))
	case n < 65536+256:
		dst = append(dst, 1<<6|1<<5)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n-256))
	case n < 1<<32:
		dst = append(dst, 2<<6|1<<5)
		dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	default:
		dst = append(dst, 3<<6|1<<5)
		dst = binary.LittleEndian.AppendUint64(dst, n)
	}
	if len(src) == 0 {
		return appendBlockHeader(dst, true, blockRaw, 0)
	}
	clear(e.table[:])
	e.rep = [3]uint32{1, 4, 8} // as every frame starts
	for start := 0; start < len(src); start += blockMax {
		end := min(start+blockMax, len(src))
		dst = e.block(dst, src, start, end, end == len(src))
	}
	return dst
}

const (
	blockRaw        = 0
	blockRLE        = 1
	blockCompressed = 2
)

func appendBlockHeader(dst []byte, last bool, typ int, size int) []byte {
	v := uint32(size)<<3 | uint32(typ)<<1
	if last {
		v |= 1
	}
	return append(dst, byte(v), byte(v>>8), byte(v>>16))
}

// block appends src[start:end] as one block, compressed if that is
// smaller. Matches may reach back into earlier blocks of src.
func (e *Encoder) block(dst, src []byte, start, end int, last bool) []byte {
	rep := e.rep
	e.findSequences(src, start, end)
	hdr := len(dst)
	dst = appendBlockHeader(dst, last, blockCompressed, 0)
	body := len(dst)
	dst = e.appendLiterals(dst)
	dst = e.appendSequences(dst)
	if size := len(dst) - body; size < end-start {
		v := uint32(size)<<3 | blockCompressed<<1
		if last {
			v |= 1
		}
		dst[hdr], dst[hdr+1], dst[hdr+2] = byte(v), byte(v>>8), byte(v>>16)
		return dst
	}
	// The decoder sees none of a raw block's offsets.
	e.rep = rep
	dst = appendBlockHeader(dst[:hdr], last, blockRaw, end-start)
	return append(dst, src[start:end]...)
}

func load32(b []byte, i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }

func hash4(v uint32) uint32 { return (v * 2654435761) >> (32 - hashLog) }

// findSequences fills e.seqs and e.lits for src[start:end]: at each
// position first the last match's offset, then the last earlier position
// with the same 4-byte hash, each taken if its bytes match, unless the
// next position has a longer match.
func (e *Encoder) findSequences(src []byte, start, end int) {
	e.seqs, e.lits = e.seqs[:0], e.lits[:0]
	anchor, pos := start, start
	for pos+minMatch <= end {
		cur := load32(src, pos)
		h := hash4(cur)
		cand := int(e.table[h]) - 1
		e.table[h] = int32(pos + 1)
		// Structured input repeats at the same distance: the last
		// offset costs a few bits where a new one costs many. It is
		// only coded so after at least one literal.
		rep := pos - int(e.rep[0])
		switch {
		case pos > anchor && rep >= 0 && load32(src, rep) == cur:
			cand = rep
		case cand < 0 || load32(src, cand) != cur:
			// The further from the last match, the faster to skip
			// through bytes that do not compress.
			pos += 1 + (pos-anchor)>>6
			continue
		}
		// Grow the match backwards into the pending literals, then on.
		for pos > anchor && cand > 0 && src[pos-1] == src[cand-1] {
			pos, cand = pos-1, cand-1
		}
		ml := matchLen(src, cand, pos, end)
		// One byte on, a longer match is worth a literal.
		if next := pos + 1; next+minMatch <= end {
			h := hash4(load32(src, next))
			c := int(e.table[h]) - 1
			e.table[h] = int32(next + 1)
			if c >= 0 && c < next && load32(src, c) == load32(src, next) {
				if l := matchLen(src, c, next, end); l > ml+1 {
					pos, cand, ml = next, c, l
				}
			}
		}
		e.lits = append(e.lits, src[anchor:pos]...)
		e.seqs = append(e.seqs, seq{lit: uint32(pos - anchor), ml: uint32(ml), off: e.offsetValue(pos-cand, pos > anchor)})
		// Index the match's last positions, where the next one often
		// starts again.
		for i := max(pos+ml-2, pos+1); i+minMatch <= end && i < pos+ml; i++ {
			e.table[hash4(load32(src, i))] = int32(i + 1)
		}
		pos += ml
		anchor = pos
	}
	e.lits = append(e.lits, src[anchor:end]...)
}

// matchLen is how far src from cand matches src from pos, at least
// minMatch bytes (already compared) and not past end.
func matchLen(src []byte, cand, pos, end int) int {
	ml := minMatch
	for pos+ml < end && src[cand+ml] == src[pos+ml] {
		ml++
	}
	return ml
}

// offsetValue codes off as the format does: 1 repeats the last offset
// (after one literal or more), 4 and up are a new offset plus 3, which
// shifts the decoder's three remembered offsets. Repeats of the second and
// third, and the shifted meanings after no literal, go unused.
func (e *Encoder) offsetValue(off int, lits bool) uint32 {
	if lits && uint32(off) == e.rep[0] {
		return 1
	}
	e.rep = [3]uint32{uint32(off), e.rep[0], e.rep[1]}
	return uint32(off) + 3
}

const (
	litsRaw        = 0
	litsRLE        = 1
	litsCompressed = 2
)

// appendLiterals appends the literals section: Huffman-coded when that
// pays, else as they are.
func (e *Encoder) appendLiterals(dst []byte) []byte {
	lits := e.lits
	n := len(lits)
	if n >= 32 {
		single := n < 1024
		out, rle, ok := e.huff.compress(lits, single)
		switch {
		case rle:
			return append(appendLitsHeader(dst, litsRLE, n), lits[0])
		case ok && len(out)+5 < n:
			c := len(out)
			switch {
			case single: // both sizes < 1024
				v := uint32(litsCompressed) | 0<<2 | uint32(n)<<4 | uint32(c)<<14
				dst = append(dst, byte(v), byte(v>>8), byte(v>>16))
			case n < 1024 && c < 1024:
				v := uint32(litsCompressed) | 1<<2 | uint32(n)<<4 | uint32(c)<<14
				dst = append(dst, byte(v), byte(v>>8), byte(v>>16))
			case n < 16384 && c < 16384:
				v := uint32(litsCompressed) | 2<<2 | uint32(n)<<4 | uint32(c)<<18
				dst = binary.LittleEndian.AppendUint32(dst, v)
			default: // both < 2^18: a block holds at most 2^17
				v := uint64(litsCompressed) | 3<<2 | uint64(n)<<4 | uint64(c)<<22
				dst = append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32))
			}
			return append(dst, out...)
		}
	}
	return append(appendLitsHeader(dst, litsRaw, n), lits...)
}

// appendLitsHeader is the header of raw or RLE literals of size n.
func appendLitsHeader(dst []byte, typ, n int) []byte {
	switch {
	case n < 32:
		return append(dst, byte(typ|n<<3))
	case n < 4096:
		v := typ | 1<<2 | n<<4
		return append(dst, byte(v), byte(v>>8))
	default:
		v := typ | 3<<2 | n<<4
		return append(dst, byte(v), byte(v>>8), byte(v>>16))
	}
}

// Literal and match length codes: the first length of each code and how
// many extra bits follow it (RFC 8878 3.1.1.3.2.1.1).
var (
	llBase = [36]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
		8192, 16384, 32768, 65536}
	llBits = [36]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16}
	mlBase = [53]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
		19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
		35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
		4099, 8195, 16387, 32771, 65539}
	mlBits = [53]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
		12, 13, 14, 15, 16}
)

// code is the last code whose first length is at most v.
func code(base []uint32, v uint32) uint8 {
	c := len(base) - 1
	for base[c] > v {
		c--
	}
	return uint8(c)
}

// Short lengths, the most common, look their codes up; past them each
// code covers one power of two.
var llShort, mlShort = codeTable(llBase[:], 64), codeTable(mlBase[:], 128+3)

func codeTable(base []uint32, n int) []uint8 {
	t := make([]uint8, n)
	for v := range t {
		t[v] = code(base, max(uint32(v), base[0]))
	}
	return t
}

func llCode(lit uint32) uint8 {
	if lit < 64 {
		return llShort[lit]
	}
	return uint8(bits.Len32(lit)-1) + 19
}

func mlCode(ml uint32) uint8 {
	if ml < 128+3 {
		return mlShort[ml]
	}
	return uint8(bits.Len32(ml-3)-1) + 36
}

// The three kinds of code a sequence has, each with its own table.
const (
	kindLL = iota
	kindOF
	kindML
)

// maxLog is each kind's largest table (RFC 8878 3.1.1.3.2.2).
var maxLog = [3]uint8{kindLL: 9, kindOF: 8, kindML: 9}

// predefined are the format's default distributions, which a block names
// with a mode of 0 and need not describe.
var predefined = [3]struct {
	norm []int16
	log  uint8
}{
	kindLL: {[]int16{4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
		2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
		-1, -1, -1, -1}, 6},
	kindOF: {[]int16{1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1}, 5},
	kindML: {[]int16{1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
		-1, -1, -1, -1, -1}, 6},
}

const (
	modePredefined = 0
	modeRLE        = 1
	modeCompressed = 2
)

// appendSequences appends the sequences section. The bitstream is read
// backwards, so the sequences are written from the last.
func (e *Encoder) appendSequences(dst []byte) []byte {
	n := len(e.seqs)
	switch {
	case n == 0:
		return append(dst, 0)
	case n < 128:
		dst = append(dst, byte(n))
	case n < 0x7F00:
		dst = append(dst, byte(n>>8)+128, byte(n))
	default:
		dst = append(dst, 0xFF)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(n-0x7F00))
	}
	// Each sequence's three codes, then a table per kind.
	e.codes = e.codes[:0]
	var counts [3][64]int
	for _, s := range e.seqs {
		c := [3]uint8{kindLL: llCode(s.lit), kindOF: uint8(bits.Len32(s.off) - 1), kindML: mlCode(s.ml)}
		e.codes = append(e.codes, c)
		for k := range c {
			counts[k][c[k]]++
		}
	}
	modes := len(dst)
	dst = append(dst, 0)
	for k := range 3 {
		var mode byte
		mode, dst = e.tables[k].choose(dst, k, counts[k][:], n)
		dst[modes] |= mode << (6 - 2*k)
	}
	ll, of, ml := &e.tables[kindLL], &e.tables[kindOF], &e.tables[kindML]
	w := &e.bw
	w.reset(dst)
	var lls, ofs, mls fseState
	for i := n - 1; i >= 0; i-- {
		s, c := e.seqs[i], e.codes[i]
		if i == n-1 {
			mls.init(ml, c[kindML])
			ofs.init(of, c[kindOF])
			lls.init(ll, c[kindLL])
		} else {
			ofs.encode(w, of, c[kindOF])
			mls.encode(w, ml, c[kindML])
			lls.encode(w, ll, c[kindLL])
		}
		w.add(s.lit-llBase[c[kindLL]], llBits[c[kindLL]])
		w.add(s.ml-mlBase[c[kindML]], mlBits[c[kindML]])
		w.add(s.off-1<<c[kindOF], c[kindOF])
	}
	mls.flush(w, ml)
	ofs.flush(w, of)
	lls.flush(w, ll)
	return w.close()
}

// choose builds t for one kind of code, from the block's own counts where
// describing them costs less than the predefined distribution's extra
// bits, and appends that description. It returns the block's mode.
func (t *fseTable) choose(dst []byte, kind int, counts []int, n int) (byte, []byte) {
	last, distinct := 0, 0
	for s, c := range counts {
		if c > 0 {
			last, distinct = s, distinct+1
		}
	}
	if distinct == 1 {
		// One symbol: a byte says which, and its state takes no bits.
		t.log = 0
		return modeRLE, append(dst, byte(last))
	}
	pre := predefined[kind]
	// The predefined tables' cost in bits, and that of a table of the
	// block's own (its description plus its codes).
	preCost, ok := 0.0, last < len(pre.norm)
	if ok {
		for s, c := range counts[:last+1] {
			if c > 0 {
				preCost += float64(c) * (float64(pre.log) - math.Log2(float64(max(pre.norm[s], 1))))
			}
		}
	}
	log := optimalLog(n, last, maxLog[kind])
	norm := normalize(t.norm[:0], counts[:last+1], n, log)
	t.norm = norm
	ownCost := 0.0
	for s, c := range counts[:last+1] {
		if c > 0 {
			ownCost += float64(c) * (float64(log) - math.Log2(float64(norm[s])))
		}
	}
	start := len(dst)
	dst = appendNormalized(dst, norm, log)
	if !ok || ownCost+float64(8*(len(dst)-start)) < preCost {
		t.build(norm, log)
		return modeCompressed, dst
	}
	t.build(pre.norm, pre.log)
	return modePredefined, dst[:start]
}

// optimalLog is the table size for n codes up to last, as zstd's
// FSE_optimalTableLog picks it: small for few codes, enough for the
// alphabet.
func optimalLog(n, last int, maxL uint8) uint8 {
	log := int(maxL)
	if b := bits.Len(uint(n-1)) - 1 - 2; b < log {
		log = b
	}
	if b := min(bits.Len(uint(n)), bits.Len(uint(last))+1); b > log {
		log = b
	}
	return uint8(min(max(log, 5), int(maxL)))
}

// normalize scales counts (summing to n) to sum to 1<<log, every present
// symbol at least 1; the largest absorbs the rounding.
func normalize(norm []int16, counts []int, n int, log uint8) []int16 {
	size := 1 << log
	sum, largest := 0, 0
	for s, c := range counts {
		v := 0
		if c > 0 {
			v = max(1, int((uint64(c)*uint64(size)+uint64(n)/2)/uint64(n)))
		}
		norm = append(norm, int16(v))
		sum += v
		if v > int(norm[largest]) {
			largest = s
		}
	}
	norm[largest] += int16(size - sum)
	// Where many rare symbols were raised to 1, the largest may not
	// cover the excess: take it from the next largest in turn.
	for norm[largest] < 1 {
		take := 1 - int(norm[largest])
		norm[largest] = 1
		for take > 0 {
			big := 0
			for s := range norm {
				if norm[s] > norm[big] {
					big = s
				}
			}
			norm[big]--
			take--
		}
	}
	return norm
}

// appendNormalized appends the description of a distribution (RFC 8878
// 4.1.1), as zstd's FSE_writeNCount writes it.
func appendNormalized(dst []byte, norm []int16, log uint8) []byte {
	var w bitWriter
	w.reset(dst)
	w.add(uint32(log-5), 4)
	size := 1 << log
	remaining, threshold, nbBits := size+1, size, log+1
	prev0 := false
	for s := 0; s < len(norm) && remaining > 1; {
		if prev0 {
			start := s
			for norm[s] == 0 {
				s++
			}
			for s >= start+24 {
				start += 24
				w.add(0xFFFF, 16)
			}
			for s >= start+3 {
				start += 3
				w.add(3, 2)
			}
			w.add(uint32(s-start), 2)
		}
		count := int(norm[s])
		s++
		maxV := 2*threshold - 1 - remaining
		remaining -= max(count, -count)
		count++
		if count >= threshold {
			count += maxV
		}
		nb := nbBits
		if count < maxV {
			nb--
		}
		w.add(uint32(count), nb)
		prev0 = count == 1
		for remaining < threshold {
			nbBits--
			threshold >>= 1
		}
	}
	w.flush()
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
	}
	return w.out
}

// fseTable is an FSE encoding table (as zstd's FSE_buildCTable makes it).
// A log of 0 is a single symbol (RLE mode), which takes no bits.
type fseTable struct {
	log      uint8
	norm     []int16
	states   []uint16 // next states, grouped by symbol
	sym      []fseSym
	symbolAt []uint8
	next     []int
}

type fseSym struct {
	deltaBits  uint32 // (bits out << 16) - threshold, as in zstd
	deltaState int32
}

func (t *fseTable) build(norm []int16, log uint8) {
	size := 1 << log
	mask := size - 1
	high := size - 1
	t.log = log
	t.symbolAt = slices.Grow(t.symbolAt[:0], size)[:size]
	t.next = slices.Grow(t.next[:0], len(norm)+1)[:len(norm)+1]
	t.states = slices.Grow(t.states[:0], size)[:size]
	t.sym = slices.Grow(t.sym[:0], len(norm))[:len(norm)]
	// Symbols of probability "less than 1" take the last cells; the rest
	// are spread over the table, each symbol's first state at its
	// cumulated count.
	t.next[0] = 0
	for s, c := range norm {
		if c == -1 {
			t.next[s+1] = t.next[s] + 1
			t.symbolAt[high] = uint8(s)
			high--
		} else {
			t.next[s+1] = t.next[s] + int(c)
		}
	}
	step := size>>1 + size>>3 + 3
	pos := 0
	for s, c := range norm {
		for range max(int(c), 0) {
			t.symbolAt[pos] = uint8(s)
			pos = (pos + step) & mask
			for pos > high {
				pos = (pos + step) & mask
			}
		}
	}
	for u := range size {
		s := t.symbolAt[u]
		t.states[t.next[s]] = uint16(size + u)
		t.next[s]++
	}
	total := 0
	for s, c := range norm {
		switch c {
		case 0:
			t.sym[s] = fseSym{}
		case -1, 1:
			t.sym[s] = fseSym{deltaBits: uint32(log)<<16 - uint32(size), deltaState: int32(total - 1)}
			total++
		default:
			maxOut := uint32(log) - uint32(bits.Len32(uint32(c-1))-1)
			t.sym[s] = fseSym{deltaBits: maxOut<<16 - uint32(c)<<maxOut, deltaState: int32(total - int(c))}
			total += int(c)
		}
	}
}

type fseState uint32

func (st *fseState) init(t *fseTable, s uint8) {
	if t.log == 0 {
		return
	}
	sym := t.sym[s]
	nb := (sym.deltaBits + 1<<15) >> 16
	v := nb<<16 - sym.deltaBits
	*st = fseState(t.states[int32(v>>nb)+sym.deltaState])
}

func (st *fseState) encode(w *bitWriter, t *fseTable, s uint8) {
	if t.log == 0 {
		return
	}
	sym := t.sym[s]
	nb := (uint32(*st) + sym.deltaBits) >> 16
	w.add(uint32(*st), uint8(nb))
	*st = fseState(t.states[int32(uint32(*st)>>nb)+sym.deltaState])
}

func (st *fseState) flush(w *bitWriter, t *fseTable) { w.add(uint32(*st), t.log) }

// bitWriter packs bits from the low end, as the decoder reads them back
// from the stream's end.
type bitWriter struct {
	out   []byte
	acc   uint64
	nbits uint8
}

func (w *bitWriter) reset(out []byte) { w.out, w.acc, w.nbits = out, 0, 0 }

// add writes the low n (at most 32) bits of v.
func (w *bitWriter) add(v uint32, n uint8) {
	if n == 0 {
		return
	}
	if w.nbits+n > 64 {
		w.flush()
	}
	w.acc |= uint64(v&(1<<n-1)) << w.nbits
	w.nbits += n
}

func (w *bitWriter) flush() {
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

// close ends the stream with a 1 bit, which tells the decoder where the
// last byte's padding stops.
func (w *bitWriter) close() []byte {
	w.add(1, 1)
	w.flush()
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
	}
	return w.out
}
