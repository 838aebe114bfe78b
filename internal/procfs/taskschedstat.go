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

// ParseTaskSchedstat parses the three fields of a schedstat file.
func ParseTaskSchedstat(b []byte, path string) (TaskSchedstat, error) {
	var v [3]uint64
	i := 0
	for k := range v {
		var f []byte
		f, i = nextField(b, i)
		n, ok := parseUint(f)
		if !ok {
			return TaskSchedstat{}, parseErr(path, "schedstat")
		}
		v[k] = n
	}
	return TaskSchedstat{RunNs: v[0], WaitNs: v[1], Timeslices: v[2]}, nil
}
