package model

import "strings"

// ThreadGroup collapses every run of digits in a thread name to "*", so the
// members of a pool (pool-1-thread-7, pool-1-thread-8) share one name.
func ThreadGroup(name string) string {
	var b strings.Builder
	inDigits := false
	for _, r := range name {
		if r >= '0' && r <= '9' {
			if !inDigits {
				b.WriteByte('*')
			}
			inDigits = true
			continue
		}
		inDigits = false
		b.WriteRune(r)
	}
	return b.String()
}
