package record

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/ctxtop/ctxtop/internal/zstdenc"
)

// TestChunksAsSmall holds the in-house encoder to what klauspost/compress's
// default level, which wrote recordings before it, does on the steady hour's
// chunks: at most 1% larger, and every chunk decodes by the reader's
// decoder to the bytes it came from.
func TestChunksAsSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("records an hour of samples, about a second")
	}
	chunks, _ := rawChunks(t)
	old, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var e zstdenc.Encoder
	var ours, theirs int
	for i, raw := range chunks {
		frame := e.EncodeAll(raw, nil)
		ours += len(frame)
		theirs += len(old.EncodeAll(raw, nil))
		got, err := d.DecodeAll(frame, nil)
		if err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if !bytes.Equal(got, raw) {
			t.Errorf("chunk %d: %d bytes in, %d different bytes out", i, len(raw), len(got))
		}
	}
	if float64(ours) > 1.01*float64(theirs) {
		t.Errorf("%d chunks compress to %d bytes, klauspost/compress's default level to %d", len(chunks), ours, theirs)
	}
	t.Logf("%d chunks: %d bytes, klauspost/compress default %d", len(chunks), ours, theirs)
}
