package zstdenc

import (
	"bytes"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
)

// inputs cover each path of the encoder: empty and tiny (raw literals, no
// sequences), one repeated byte (RLE literals, overlapping matches), text
// (Huffman literals, one and four streams), noise (raw blocks), more than
// one block with matches reaching back across blocks, and each frame
// content size field.
func inputs() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	text := func(n int) []byte {
		words := []string{"switch", "context", "thread ", "futex", "wake ", "run queue", "\n", "0", "12", "345"}
		var b []byte
		for len(b) < n {
			b = append(b, words[rng.IntN(len(words))]...)
		}
		return b[:n]
	}
	// Counters like a recording's: small deltas in byte planes, mostly
	// zero high bytes, a few noisy low ones.
	planes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			switch i % 8 {
			case 0:
				b[i] = byte(rng.IntN(256))
			case 1:
				b[i] = byte(rng.IntN(4))
			case 2:
				b[i] = byte(i / 4096)
			}
		}
		return b
	}
	block := noise(1000)
	return map[string][]byte{
		"empty":                 {},
		"one byte":              {7},
		"short":                 []byte("abcabcabcabc"),
		"255":                   text(255),
		"256":                   text(256),
		"one byte repeated":     bytes.Repeat([]byte{'z'}, 70000),
		"text 1000":             text(1000),
		"text 5000":             text(5000),
		"text 300k":             text(300 << 10),
		"noise 200k":            noise(200 << 10),
		"planes 1M":             planes(1 << 20),
		"repeats across blocks": append(append(append(noise(130<<10), block...), noise(10)...), block...),
		"65791":                 text(65536 + 255),
		"65792":                 text(65536 + 256),
	}
}

// TestRoundTrip decodes every frame with klauspost/compress, which the
// recorder's reader uses: the bytes must come back exactly.
func TestRoundTrip(t *testing.T) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var e Encoder
	for name, in := range inputs() {
		frame := e.EncodeAll(in, nil)
		got, err := d.DecodeAll(frame, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, in) {
			t.Errorf("%s: %d bytes in, %d different bytes out", name, len(in), len(got))
		}
	}
}

// TestReferenceDecoder checks the frames with zstd's own command, the
// reference implementation, where it is installed.
func TestReferenceDecoder(t *testing.T) {
	if _, err := exec.LookPath("zstd"); err != nil {
		t.Skip("no zstd command")
	}
	var e Encoder
	for name, in := range inputs() {
		cmd := exec.Command("zstd", "-d", "-c", "-q")
		cmd.Stdin = bytes.NewReader(e.EncodeAll(in, nil))
		got, err := cmd.Output()
		if err != nil {
			t.Errorf("%s: zstd -d: %v", name, err)
			continue
		}
		if !bytes.Equal(got, in) {
			t.Errorf("%s: %d bytes in, %d different bytes out", name, len(in), len(got))
		}
	}
}

// TestCompresses: what repeats must shrink, and nothing may grow past the
// frame's few bytes of overhead per block.
func TestCompresses(t *testing.T) {
	var e Encoder
	for name, in := range inputs() {
		n := len(e.EncodeAll(in, nil))
		if limit := len(in) + 13 + 3*(len(in)/blockMax); n > limit {
			t.Errorf("%s: %d bytes to %d, past %d", name, len(in), n, limit)
		}
	}
	in := inputs()
	for _, name := range []string{"one byte repeated", "text 300k", "planes 1M", "repeats across blocks"} {
		n := len(e.EncodeAll(in[name], nil))
		if name == "repeats across blocks" {
			// The second copy of the 1000-byte block is a match.
			if want := len(in[name]) - 900; n > want {
				t.Errorf("%s: %d bytes to %d, want at most %d", name, len(in[name]), n, want)
			}
			continue
		}
		if n > len(in[name])/2 {
			t.Errorf("%s: %d bytes to %d, not even halved", name, len(in[name]), n)
		}
	}
}

// TestAppends: EncodeAll appends to dst and reuses its tables, so a second
// call gives the same frame as the first.
func TestAppends(t *testing.T) {
	var e Encoder
	in := inputs()["text 5000"]
	first := e.EncodeAll(in, nil)
	got := e.EncodeAll(in, []byte("prefix"))
	if diff := cmp.Diff(append([]byte("prefix"), first...), got); diff != "" {
		t.Errorf("second frame (-want +got):\n%s", diff)
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, in := range inputs() {
		if len(in) < 4096 {
			f.Add(in)
		}
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Fatal(err)
	}
	var e Encoder
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := d.DecodeAll(e.EncodeAll(in, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, in) {
			t.Errorf("%d bytes in, %d different bytes out", len(in), len(got))
		}
	})
}

// TestCodes: the shortcuts give each length the code the format's table
// of first lengths does.
func TestCodes(t *testing.T) {
	for v := uint32(0); v < 1<<17; v++ {
		if got, want := llCode(v), code(llBase[:], v); got != want {
			t.Errorf("literal length %d: code %d, want %d", v, got, want)
		}
		if v < 3 {
			continue
		}
		if got, want := mlCode(v), code(mlBase[:], v); got != want {
			t.Errorf("match length %d: code %d, want %d", v, got, want)
		}
	}
}

// TestRawBlockKeepsOffsets: a block that went out raw, though its
// sequences were found, told the decoder no offset; the next block's
// repeated offset must be the last one the decoder saw.
func TestRawBlockKeepsOffsets(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := make([]byte, blockMax+4096)
	for i := range in[:blockMax+64] {
		in[i] = byte(rng.Uint32())
	}
	// Early in the first block, 8 bytes repeat from 100 back: one
	// sequence, too little to make the block smaller than raw. The
	// second block opens with one literal and 8 bytes from as far back,
	// and ends in zeros, so that it is compressed.
	copy(in[200:208], in[100:])
	copy(in[blockMax+1:blockMax+9], in[blockMax+1-100:])
	var e Encoder
	frame := e.EncodeAll(in, nil)
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.DecodeAll(frame, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, in) {
		t.Errorf("%d bytes in, %d different bytes out", len(in), len(got))
	}
}

// TestHuffmanCodes: text is Huffman-coded in one stream and in four; a
// skewed distribution whose optimal code runs past 11 bits is flattened
// to at most 11, and every code is complete (the decoder derives the last
// weight from that); the frames decode.
func TestHuffmanCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// Fibonacci counts over 30 byte values: an optimal code 29 bits deep.
	var skewed []byte
	a, b := 1, 1
	for s := range 30 {
		for range a {
			skewed = append(skewed, byte(s))
		}
		a, b = b, a+b
	}
	rng.Shuffle(len(skewed), func(i, j int) { skewed[i], skewed[j] = skewed[j], skewed[i] })
	text := inputs()["text 5000"]
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		name   string
		lits   []byte
		single bool
	}{
		{"text, one stream", text[:1000], true},
		{"text, four streams", text, false},
		{"skewed", skewed, false},
		{"skewed, few", skewed[:500], true},
	} {
		var h huffman
		if _, rle, ok := h.compress(c.lits, c.single); rle || !ok {
			t.Errorf("%s: rle %v, ok %v; want Huffman-coded", c.name, rle, ok)
			continue
		}
		kraft, longest := 0, uint8(0)
		for _, l := range h.lens {
			if l > 0 {
				kraft += 1 << (huffMaxBits - l)
				longest = max(longest, l)
			}
		}
		if longest > huffMaxBits || kraft != 1<<huffMaxBits {
			t.Errorf("%s: longest code %d bits, Kraft sum %d/%d", c.name, longest, kraft, 1<<huffMaxBits)
		}
		var e Encoder
		got, err := d.DecodeAll(e.EncodeAll(c.lits, nil), nil)
		if err != nil || !bytes.Equal(got, c.lits) {
			t.Errorf("%s: round trip: %v", c.name, err)
		}
	}
}
