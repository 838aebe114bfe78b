package procfs

import (
	"strconv"
)

// TaskSchedstat is /proc/PID/task/TID/schedstat, three numbers on one line:
//
//	1034853 20341 12
//
// nanoseconds on a CPU, nanoseconds runnable but waiting on a run queue, and
// the number of times the thread was scheduled in ("timeslices"). The third
// only moves when the thread ran, which is how the sampler knows which
// threads need their status re-read.
type TaskSchedstat struct {
	RunNs      uint64
	WaitNs     uint64
	Timeslices uint64
}

// TaskSchedstat reads <root>/PID/task/TID/schedstat.
func (fs FS) TaskSchedstat(pid, tid int) (TaskSchedstat, error) {
	p := fs.Path(strconv.Itoa(pid), "task", strconv.Itoa(tid), "schedstat")
	b, err := ReadFile(p, LimitLine)
	if err != nil {
		return TaskSchedstat{}, err
	}
	return ParseTaskSchedstat(b, p)
}

// ParseTaskSchedstat parses the three fields of a schedstat file. Without
// privilege every thread's schedstat is parsed every pass, so each field's
// digits are read once, in one loop, rather than found and then converted
// (a fuzz test holds it to the generic field reader's result).
func ParseTaskSchedstat(b []byte, path string) (TaskSchedstat, error) {
	var v [3]uint64
	i := 0
	for k := range v {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		start := i
		var n uint64
		for ; i < len(b); i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			n = n*10 + uint64(d)
		}
		// Nineteen digits cannot overflow; a longer field is checked the
		// slow way, as is one that ends in anything but a separator.
		if i == start || i-start > 19 || i < len(b) && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' {
			var f []byte
			f, i = nextField(b, start)
			var ok bool
			if n, ok = parseUint(f); !ok {
				return TaskSchedstat{}, parseErr(path, "schedstat")
			}
		}
		v[k] = n
	}
	return TaskSchedstat{RunNs: v[0], WaitNs: v[1], Timeslices: v[2]}, nil
}
