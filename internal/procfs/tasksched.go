package procfs

import (
	"bytes"
	"strconv"
)

// TaskSched is what the sampler takes from /proc/PID/task/TID/sched
// (present with CONFIG_SCHED_DEBUG), a table of "key : value" lines the
// kernel formats at each read.
type TaskSched struct {
	// Migrations is se.nr_migrations: how many times the scheduler moved
	// the thread to another CPU.
	Migrations uint64
	// VoluntarySwitches and InvoluntarySwitches are nr_voluntary_switches
	// and nr_involuntary_switches: the same counters (the task's nvcsw and
	// nivcsw) that status prints as voluntary_ctxt_switches and
	// nonvoluntary_ctxt_switches.
	VoluntarySwitches   uint64
	InvoluntarySwitches uint64
	// HasMigrations and HasSwitches say which of the above the file held
	// and parsed: both switch counts, or neither.
	HasMigrations, HasSwitches bool
}

// ParseTaskSched finds the migration and switch counts in a sched file.
// A field that is absent or does not parse is left unset; the lines it
// does not know are skipped, whatever they hold, and of a key printed twice
// the first counts. The kernel prints the three near the top, so parsing
// stops once it has seen them: the file is read for every thread a first
// pass finds, and the rest of its 25–50 lines would only cost time.
func ParseTaskSched(b []byte) TaskSched {
	var s TaskSched
	var vol, invol bool
	const all = 1<<3 - 1
	seen := 0
	for len(b) > 0 && seen != all {
		line := b
		if j := bytes.IndexByte(b, '\n'); j >= 0 {
			line, b = b[:j], b[j+1:]
		} else {
			b = nil
		}
		// Every key starts its line; most lines are none of ours.
		if len(line) == 0 || line[0] != 's' && line[0] != 'n' {
			continue
		}
		var bit int
		var val []byte
		var ok bool
		if val, ok = schedValue(line, "se.nr_migrations"); ok {
			bit = 1
		} else if val, ok = schedValue(line, "nr_voluntary_switches"); ok {
			bit = 2
		} else if val, ok = schedValue(line, "nr_involuntary_switches"); ok {
			bit = 4
		}
		if bit == 0 || seen&bit != 0 {
			continue
		}
		seen |= bit
		switch bit {
		case 1:
			s.Migrations, s.HasMigrations = parseUint(val)
		case 2:
			s.VoluntarySwitches, vol = parseUint(val)
		case 4:
			s.InvoluntarySwitches, invol = parseUint(val)
		}
	}
	s.HasSwitches = vol && invol
	if !s.HasSwitches {
		s.VoluntarySwitches, s.InvoluntarySwitches = 0, 0
	}
	return s
}

// schedValue is the value of line when line is "key", blanks, ':' and the
// value, trimmed.
func schedValue(line []byte, key string) ([]byte, bool) {
	if !hasPrefix(line, key) {
		return nil, false
	}
	rest := bytes.TrimLeft(line[len(key):], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return nil, false
	}
	return bytes.TrimSpace(rest[1:]), true
}

// TaskSchedMigrations reads se.nr_migrations from
// <root>/PID/task/TID/sched; ok is false when the file cannot be read (a
// kernel built without CONFIG_SCHED_DEBUG has none) or lacks the field.
func (fs FS) TaskSchedMigrations(pid, tid int) (n uint64, ok bool) {
	b, err := ReadFile(fs.Path(strconv.Itoa(pid), "task", strconv.Itoa(tid), "sched"), LimitStatus)
	if err != nil {
		return 0, false
	}
	return ParseTaskSchedMigrations(b)
}

// ParseTaskSchedMigrations finds "se.nr_migrations : N" in a sched file. ok
// is false when the file lacks the field or it does not parse.
func ParseTaskSchedMigrations(b []byte) (n uint64, ok bool) {
	s := ParseTaskSched(b)
	return s.Migrations, s.HasMigrations
}
