package procfs

import "bytes"

// ParseTaskSchedMigrations finds "se.nr_migrations : N" in
// /proc/PID/task/TID/sched (present with CONFIG_SCHED_DEBUG): how many times
// the scheduler moved the thread to another CPU. ok is false when the file
// lacks the field or it does not parse.
func ParseTaskSchedMigrations(b []byte) (n uint64, ok bool) {
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		key, val, found := bytes.Cut(line, []byte(":"))
		if !found || string(bytes.TrimSpace(key)) != "se.nr_migrations" {
			continue
		}
		return parseUint(bytes.TrimSpace(val))
	}
	return 0, false
}
