package zstdenc

import "slices"

// Literals are Huffman-coded (RFC 8878 4.2): code lengths of at most 11
// bits, described by their weights, FSE-compressed or 4 bits each, then
// one or four bitstreams. Written here rather than taken from
// klauspost/compress's huff0, whose encoder cost the binary 41 KB.

const huffMaxBits = 11

// huffman holds one block's literal code and its scratch space.
type huffman struct {
	counts  [256]int
	lens    [256]uint8 // bits of each byte's code, 0 where absent
	codes   [256]uint16
	weights [256]uint8
	order   []uint64 // the present bytes, rarest first, each under its count
	nodes   []huffNode
	wt      fseTable
	bw      bitWriter
	out     []byte
}

type huffNode struct {
	count  int
	parent int32
	depth  uint8
}

// compress returns the tree description and bitstreams of lits (single
// says one stream rather than four), or ok false where coding does not
// shrink them. rle says every byte is the same.
func (h *huffman) compress(lits []byte, single bool) (out []byte, rle, ok bool) {
	clear(h.counts[:])
	for _, b := range lits {
		h.counts[b]++
	}
	last, distinct := 0, 0
	for s, c := range h.counts {
		if c > 0 {
			last, distinct = s, distinct+1
		}
	}
	if distinct == 1 {
		return nil, true, false
	}
	maxBits := h.lengths()
	for s := range h.weights[:last+1] {
		h.weights[s] = 0
		if h.lens[s] > 0 {
			h.weights[s] = maxBits + 1 - h.lens[s]
		}
	}
	out, ok = h.appendWeights(h.out[:0], last)
	if !ok {
		return nil, false, false
	}
	h.assignCodes(maxBits, last)
	if single {
		out = h.appendStream(out, lits)
	} else {
		seg := (len(lits) + 3) / 4
		jump := len(out)
		out = append(out, 0, 0, 0, 0, 0, 0)
		for i := range 4 {
			start := len(out)
			out = h.appendStream(out, lits[i*seg:min((i+1)*seg, len(lits))])
			if i < 3 {
				size := len(out) - start
				out[jump+2*i], out[jump+2*i+1] = byte(size), byte(size>>8)
			}
		}
	}
	h.out = out
	return out, false, len(out) < len(lits)
}

// lengths sets h.lens to a Huffman code of h.counts no longer than
// huffMaxBits, and returns its longest length. Where the optimal code is
// deeper, the counts are flattened (halved, kept at least 1) and the code
// built again: all counts equal give at most 8 bits.
func (h *huffman) lengths() uint8 {
	for shift := 0; ; shift++ {
		// Rarest first, ties by byte: the count above the byte in one
		// key, whose sort (uint64) the binary links anyway.
		h.order = h.order[:0]
		for s, c := range h.counts {
			if c > 0 {
				h.order = append(h.order, uint64(max(c>>shift, 1))<<8|uint64(s))
			}
		}
		slices.Sort(h.order)
		n := len(h.order)
		// Two queues: the leaves in order, and the joined nodes, which
		// come out in order of count too.
		h.nodes = h.nodes[:0]
		for _, k := range h.order {
			h.nodes = append(h.nodes, huffNode{count: int(k >> 8)})
		}
		leaf, joined := 0, n
		take := func() int {
			if leaf < n && (joined >= len(h.nodes) || h.nodes[leaf].count <= h.nodes[joined].count) {
				leaf++
				return leaf - 1
			}
			joined++
			return joined - 1
		}
		for len(h.nodes) < 2*n-1 {
			a, b := take(), take()
			k := int32(len(h.nodes))
			h.nodes[a].parent, h.nodes[b].parent = k, k
			h.nodes = append(h.nodes, huffNode{count: h.nodes[a].count + h.nodes[b].count})
		}
		var deepest uint8
		h.nodes[len(h.nodes)-1].depth = 0
		for i := len(h.nodes) - 2; i >= 0; i-- {
			h.nodes[i].depth = h.nodes[h.nodes[i].parent].depth + 1
			deepest = max(deepest, h.nodes[i].depth)
		}
		if deepest <= huffMaxBits {
			clear(h.lens[:])
			for i, k := range h.order {
				h.lens[byte(k)] = h.nodes[i].depth
			}
			return deepest
		}
	}
}

// assignCodes gives the codes their values as the decoder expects them:
// from the longest codes, valued from 0 in byte order, each shorter
// length starting past the longer ones.
func (h *huffman) assignCodes(maxBits uint8, last int) {
	var perLen, next [huffMaxBits + 1]uint16
	for _, l := range h.lens[:last+1] {
		perLen[l]++
	}
	v := uint16(0)
	for l := maxBits; l > 0; l-- {
		next[l] = v
		v = (v + perLen[l]) >> 1
	}
	for s, l := range h.lens[:last+1] {
		if l > 0 {
			h.codes[s] = next[l]
			next[l]++
		}
	}
}

// appendWeights appends the tree description: the weights of bytes 0 to
// last-1 (the last one's follows from them), FSE-compressed or, for up to
// 128 of them, 4 bits each, whichever is shorter.
func (h *huffman) appendWeights(dst []byte, last int) ([]byte, bool) {
	w := h.weights[:last]
	start := len(dst)
	if fse, ok := h.appendFSEWeights(append(dst, 0), w); ok && (len(fse)-start-1 < 128) && (last > 128 || len(fse)-start-1 <= (last+1)/2) {
		fse[start] = byte(len(fse) - start - 1)
		return fse, true
	}
	if last > 128 {
		return dst[:start], false
	}
	dst = append(dst[:start], byte(127+last))
	for i := 0; i < last; i += 2 {
		b := w[i] << 4
		if i+1 < last {
			b |= w[i+1]
		}
		dst = append(dst, b)
	}
	return dst, true
}

// appendFSEWeights appends w FSE-coded with two interleaved states, as
// zstd's FSE_compress_usingCTable writes it.
func (h *huffman) appendFSEWeights(dst []byte, w []uint8) ([]byte, bool) {
	var counts [huffMaxBits + 2]int
	lastW, distinct := 0, 0
	for _, v := range w {
		counts[v]++
	}
	for v, c := range counts {
		if c > 0 {
			lastW, distinct = v, distinct+1
		}
	}
	if distinct < 2 || len(w) < 2 {
		return dst, false
	}
	log := optimalLog(len(w), lastW, 6)
	norm := normalize(h.wt.norm[:0], counts[:lastW+1], len(w), log)
	h.wt.norm = norm
	dst = appendNormalized(dst, norm, log)
	h.wt.build(norm, log)
	t := &h.wt
	b := &h.bw
	b.reset(dst)
	var s1, s2 fseState
	i := len(w) - 1
	if len(w)&1 == 1 {
		s1.init(t, w[i])
		s2.init(t, w[i-1])
		s1.encode(b, t, w[i-2])
		i -= 3
	} else {
		s2.init(t, w[i])
		s1.init(t, w[i-1])
		i -= 2
	}
	for ; i > 0; i -= 2 {
		s2.encode(b, t, w[i])
		s1.encode(b, t, w[i-1])
	}
	s2.flush(b, t)
	s1.flush(b, t)
	return b.close(), true
}

// appendStream appends one bitstream of lits, the last byte first, as the
// decoder reads backwards.
func (h *huffman) appendStream(dst, lits []byte) []byte {
	b := &h.bw
	b.reset(dst)
	for i := len(lits) - 1; i >= 0; i-- {
		s := lits[i]
		b.add(uint32(h.codes[s]), h.lens[s])
	}
	return b.close()
}
