package procfs

import (
	"strconv"
)

// TaskStatus is what ctxtop takes from /proc/PID/task/TID/status:
//
//	Name:	pool-1-thread-7           the thread's comm, escaped
//	State:	S (sleeping)
//	Cpus_allowed_list:	0-1         CPUs the scheduler may put it on
//	voluntary_ctxt_switches:	150   gave up the CPU: blocked on I/O, a lock, a sleep
//	nonvoluntary_ctxt_switches:	545 had the CPU taken: time slice used up, preempted
//
// Name and CPUsAllowed point into the parsed buffer, so parsing allocates
// nothing; copy them to keep them.
type TaskStatus struct {
	Name                []byte
	State               byte
	CPUsAllowed         []byte
	VoluntarySwitches   uint64
	InvoluntarySwitches uint64
}

// TaskStatus reads <root>/PID/task/TID/status.
func (fs FS) TaskStatus(pid, tid int) (TaskStatus, error) {
	p := fs.Path(strconv.Itoa(pid), "task", strconv.Itoa(tid), "status")
	b, err := ReadFile(p, LimitStatus)
	if err != nil {
		return TaskStatus{}, err
	}
	return ParseTaskStatus(b, p)
}

// ParseTaskStatus parses a status file. The two switch counters and State are
// required (kernels since 2.6.23 have them); Cpus_allowed_list may be absent.
func ParseTaskStatus(b []byte, path string) (TaskStatus, error) {
	var s TaskStatus
	const need = 3
	found := 0
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		colon := -1
		for k, c := range line {
			if c == ':' {
				colon = k
				break
			}
		}
		if colon < 0 {
			continue
		}
		key, rest := line[:colon], line[colon+1:]
		switch string(key) {
		case "Name":
			// Only the leading tab is a separator; a comm may hold spaces.
			if len(rest) > 0 && rest[0] == '\t' {
				rest = rest[1:]
			}
			s.Name = rest
		case "State":
			f, _ := nextField(rest, 0)
			if len(f) != 1 {
				return TaskStatus{}, parseErr(path, "State")
			}
			s.State = f[0]
			found++
		case "Cpus_allowed_list":
			f, _ := nextField(rest, 0)
			s.CPUsAllowed = f
		case "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches":
			f, _ := nextField(rest, 0)
			v, ok := parseUint(f)
			if !ok {
				return TaskStatus{}, parseErr(path, string(key))
			}
			if key[0] == 'v' {
				s.VoluntarySwitches = v
			} else {
				s.InvoluntarySwitches = v
			}
			found++
		}
	}
	if found < need {
		return TaskStatus{}, parseErr(path, "ctxt_switches")
	}
	return s, nil
}
