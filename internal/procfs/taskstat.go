package procfs

import (
	"strconv"
)

// TaskStat is what ctxtop takes from /proc/PID/task/TID/stat, a single line
// "TID (comm) S ppid ..." where comm may itself hold spaces and parentheses,
// so fields are counted from the last ')':
//
//	field 3   state
//	field 20  num_threads, of the whole process
//	field 22  starttime, clock ticks after boot: a TID whose start time
//	          changed is a new thread that reused the number
//	field 39  processor, the CPU it last ran on
//
// The comm between the first '(' and the last ')' is the comm file's name
// without its newline: the kernel prints both with proc_task_name, raw.
type TaskStat struct {
	// Comm is the raw name, a slice of the parsed line.
	Comm  []byte
	State byte
	// Flags are the kernel's task flags (PF_*), field 9.
	Flags      uint64
	NumThreads int
	StartTime  uint64
	LastCPU    int
}

// KernelThread is PF_KTHREAD among TaskStat.Flags: a kernel thread, which
// is a process of one thread for good.
const KernelThread = 0x00200000

// TaskStat reads <root>/PID/task/TID/stat.
func (fs FS) TaskStat(pid, tid int) (TaskStat, error) {
	p := fs.Path(strconv.Itoa(pid), "task", strconv.Itoa(tid), "stat")
	b, err := ReadFile(p, LimitLine)
	if err != nil {
		return TaskStat{}, err
	}
	return ParseTaskStat(b, p)
}

// ParseTaskStat parses a task's stat line.
func ParseTaskStat(b []byte, path string) (TaskStat, error) {
	end := -1
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			end = i
			break
		}
	}
	start := -1
	for i := 0; i < end; i++ {
		if b[i] == '(' {
			start = i
			break
		}
	}
	if end < 0 || start < 0 {
		return TaskStat{}, parseErr(path, "comm")
	}
	s := TaskStat{Comm: b[start+1 : end]}
	i := end + 1
	for field := 3; field <= 39; field++ {
		var f []byte
		f, i = nextField(b, i)
		if len(f) == 0 {
			return TaskStat{}, parseErr(path, "field "+strconv.Itoa(field))
		}
		switch field {
		case 3:
			if len(f) != 1 {
				return TaskStat{}, parseErr(path, "state")
			}
			s.State = f[0]
		case 9:
			// Not worth refusing the line for: 0 when unreadable.
			s.Flags, _ = parseUint(f)
		case 20:
			v, ok := parseUint(f)
			if !ok || v > 1<<30 {
				return TaskStat{}, parseErr(path, "num_threads")
			}
			s.NumThreads = int(v)
		case 22:
			v, ok := parseUint(f)
			if !ok {
				return TaskStat{}, parseErr(path, "starttime")
			}
			s.StartTime = v
		case 39:
			v, ok := parseUint(f)
			if !ok || v > 1<<20 {
				return TaskStat{}, parseErr(path, "processor")
			}
			s.LastCPU = int(v)
		}
	}
	return s, nil
}
