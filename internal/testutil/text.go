package testutil

import "strings"

// Between is the part of s after the first from and before the next to
// after it (the rest of s without one); "" when s has no from. A screen
// test looks at one section with it, so a name shown elsewhere on the
// screen cannot satisfy it.
func Between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		s = s[:j]
	}
	return s
}
