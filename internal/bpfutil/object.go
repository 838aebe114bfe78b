package bpfutil

import (
	"bytes"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/klauspost/compress/zstd"
)

// zstdMagic opens every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxObject bounds what an embedded object may inflate to: the largest is
// some 40 KB.
const maxObject = 4 << 20

// Spec reads a BPF object embedded in the binary. `make generate` stores
// the objects zstd-compressed (internal/bpfutil/squash), a third of their
// size, since they took some 90 KB of a binary that has a budget; an
// object as the compiler wrote it is read as it is.
func Spec(obj []byte) (*ebpf.CollectionSpec, error) {
	if bytes.HasPrefix(obj, zstdMagic) {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxObject), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			return nil, err
		}
		raw, err := d.DecodeAll(obj, make([]byte, 0, 64<<10))
		d.Close()
		if err != nil {
			return nil, fmt.Errorf("inflating the BPF object: %w", err)
		}
		obj = raw
	}
	return ebpf.LoadCollectionSpecFromReader(bytes.NewReader(obj))
}
