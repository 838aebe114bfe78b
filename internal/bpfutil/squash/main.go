// Command squash compresses BPF objects in place with zstd, for `make
// generate`: the binary embeds them so (bpfutil.Spec reads them). The
// output depends only on the input and the zstd package's version, so
// generating twice gives the same bytes. An object compressed already is
// left as it is.
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/klauspost/compress/zstd"
)

func main() {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		fmt.Fprintln(os.Stderr, "squash:", err)
		os.Exit(1)
	}
	for _, path := range os.Args[1:] {
		raw, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "squash:", err)
			os.Exit(1)
		}
		if bytes.HasPrefix(raw, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			continue
		}
		if err := os.WriteFile(path, enc.EncodeAll(raw, nil), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "squash:", err)
			os.Exit(1)
		}
	}
}
