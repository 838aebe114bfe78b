// Package sanitize makes untrusted strings (thread names from /proc, names in
// a recording or a BPF map) safe to print on a terminal and in fixed-width
// text.
//
// Any user can name a thread "\x1b[2J" with prctl(PR_SET_NAME); printed raw,
// that clears the screen of whoever watches. Name replaces every character
// that could act on a terminal or break a row:
//
//   - C0 controls U+0000–U+001F (including tab, CR, LF and ESC), DEL U+007F
//     and C1 controls U+0080–U+009F become '?';
//   - format characters (Unicode category Cf: bidi embeddings, overrides and
//     isolates U+202A–U+202E and U+2066–U+2069, zero-width space/joiners
//     U+200B–U+200F, U+2060–U+2064, byte-order mark U+FEFF, tag characters,
//     soft hyphen) and the line and paragraph separators U+2028, U+2029
//     become '?';
//   - bytes that are not valid UTF-8 become U+FFFD '�', one per bad byte.
//
// Each replaced character takes one terminal cell, so a name keeps its
// shape and the replacement is visible: one '?' per control character, never
// a silent deletion that would let two names look alike. Everything else,
// including CJK, emoji and combining marks, passes unchanged; callers
// measure width in terminal cells, not bytes or runes.
//
// Name is idempotent, and returns s itself (no allocation) when s is
// already clean, which is the common case for a comm read every tick.
package sanitize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Substitute replaces a control or format character.
const Substitute = '?'

// Name returns s with every character that could act on a terminal replaced
// as the package documentation describes.
func Name(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				c = Substitute
			}
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case unsafeRune(r):
			b.WriteByte(Substitute)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Clean reports whether Name would return s unchanged.
func Clean(s string) bool { return firstUnsafe(s) == len(s) }

// firstUnsafe returns the index of the first byte Name must replace, or
// len(s).
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) {
			return i
		}
		i += n
	}
	return len(s)
}

// unsafeRune reports whether a decoded non-ASCII rune must be replaced.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls, CSI is U+009B
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	}
	return unicode.Is(unicode.Cf, r)
}
