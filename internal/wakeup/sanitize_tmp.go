package wakeup

import "strings"

func sanitizeName(s string) string {
	return strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s), "\ufffd")
}
