package procfs

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzParseComm: at most MaxComm bytes, a prefix of the input, and the cut
// never leaves a partial UTF-8 sequence that was whole in the input.
func FuzzParseComm(f *testing.F) {
	f.Add([]byte("ping-futex\n"))
	f.Add(bytes.Repeat([]byte("长"), 30))
	f.Add(append(bytes.Repeat([]byte("a"), 63), 0xe9, 0x95, 0xbf))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := ParseComm(b)
		if len(got) > MaxComm {
			t.Fatalf("ParseComm kept %d bytes, over %d", len(got), MaxComm)
		}
		if !bytes.HasPrefix(b, got) {
			t.Fatalf("ParseComm(%q) = %q, not a prefix", b, got)
		}
		if utf8.Valid(b) && !utf8.Valid(got) {
			t.Fatalf("ParseComm(%q) = %q split a character", b, got)
		}
	})
}
