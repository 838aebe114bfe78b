package sanitize

import (
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestName(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "kworker/0:1H", "kworker/0:1H"},
		{"clear screen", "\x1b[2J\x1b[Hpwn", "?[2J?[Hpwn"},
		{"colour", "x\x1b[31mRED", "x?[31mRED"},
		{"cr tab lf", "a\rb\tc\nd", "a?b?c?d"},
		{"osc title", "\x1b]0;owned\x07", "?]0;owned?"},
		{"nul and del", "a\x00b\x7f", "a?b?"},
		{"c1 csi", "a\u009b2Jb", "a?2Jb"},
		{"c1 next line", "a\u0085b", "a?b"},
		{"invalid utf8", "a\xffb\xc3", "a\ufffdb\ufffd"},
		{"raw c1 byte", "a\x9b2J", "a\ufffd2J"},
		{"overlong slash", "\xc0\xaf", "\ufffd\ufffd"},
		{"surrogate", "\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"bidi override", "evil\u202egnp.exe", "evil?gnp.exe"},
		{"bidi embeddings", "\u202a\u202b\u202c\u202d", "????"},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", "?a?b?c?"},
		{"zero width", "a\u200bb\u200cc\u200dd\u200ee\u200ff", "a?b?c?d?e?f"},
		{"word joiner and bom", "\u2060x\ufeff", "?x?"},
		{"soft hyphen", "a\u00adb", "a?b"},
		{"arabic letter mark", "a\u061cb", "a?b"},
		{"line separators", "a\u2028b\u2029c", "a?b?c"},
		{"tag characters", "a\U000e0041\U000e007f", "a??"},
		{"cjk kept", "数据库线程", "数据库线程"},
		{"emoji kept", "🔥hot", "🔥hot"},
		{"combining kept", "e\u0301", "e\u0301"},
		{"replacement char kept", "\ufffd", "\ufffd"},
		{"nbsp kept", "a\u00a0b", "a\u00a0b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Name(tc.in)); diff != "" {
				t.Errorf("Name(%q) (-want +got):\n%s", tc.in, diff)
			}
			if got, want := Clean(tc.in), tc.in == tc.want; got != want {
				t.Errorf("Clean(%q) = %v, want %v", tc.in, got, want)
			}
		})
	}
}

func TestNameCleanDoesNotAllocate(t *testing.T) {
	for _, s := range []string{"", "bash", "kworker/u8:2-events_unbound", "数据库线程", "🔥hot"} {
		if n := testing.AllocsPerRun(100, func() { _ = Name(s) }); n != 0 {
			t.Errorf("Name(%q) allocates %v times, want 0", s, n)
		}
	}
}

func FuzzName(f *testing.F) {
	for _, s := range []string{"", "bash", "\x1b[2J\x1b[Hpwn", "a\rb\tc\nd", "\x1b]0;owned\x07",
		"\xff\xfe", "数据库", "\u202egnp", "\u009b31m", "\xc2", "\xe2\x80", "🔥"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Name(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Name(%q) = %q, not valid UTF-8", s, got)
		}
		for _, r := range got {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) || unsafeRune(r) {
				t.Fatalf("Name(%q) = %q keeps %U", s, got, r)
			}
		}
		for i := 0; i < len(got); i++ {
			if c := got[i]; c < 0x20 || c == 0x7f {
				t.Fatalf("Name(%q) = %q keeps control byte %#x", s, got, c)
			}
		}
		if again := Name(got); again != got {
			t.Fatalf("Name not idempotent: Name(%q) = %q, Name of that = %q", s, got, again)
		}
		if !Clean(got) {
			t.Fatalf("Clean(Name(%q)) = false", s)
		}
		if Clean(s) != (got == s) {
			t.Fatalf("Clean(%q) = %v but Name changed it to %q", s, Clean(s), got)
		}
		if n, m := utf8.RuneCountInString(got), len(s); n > m {
			t.Fatalf("Name(%q) has %d runes, more than %d input bytes", s, n, m)
		}
	})
}

func BenchmarkNameClean(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Name("kworker/u8:2-ev")
	}
}

func BenchmarkNameDirty(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Name("\x1b[2J\x1b[Hpwn")
	}
}
