package procfs

// TaskSyscall is /proc/PID/task/TID/syscall: the system call a blocked
// thread is in, one line
//
//	202 0xc000180148 0x80 0x0 0x0 0x0 0x0 0x7ffd1b5c8a60 0x46e2c3
//
// the call's number (architecture-specific), its six arguments, then the
// stack and instruction pointers, all but the number in hex. A thread that
// is on a CPU reads "running"; one blocked outside a system call (a page
// fault) reads "-1 sp pc". The file is 0400 and checked against ptrace
// rights: another user's thread gives EACCES or EPERM without them.
type TaskSyscall struct {
	// Running is true for "running": no call to report.
	Running bool
	// Number is the system call number, -1 when blocked outside one.
	Number int
	// Args are the six arguments; Args[0] is the fd of read, write,
	// recvfrom, epoll_wait and friends.
	Args [6]uint64
}

// ParseTaskSyscall parses the contents of a syscall file.
func ParseTaskSyscall(b []byte, path string) (TaskSyscall, error) {
	f, i := nextField(b, 0)
	switch {
	case string(f) == "running":
		return TaskSyscall{Running: true}, nil
	case string(f) == "-1":
		return TaskSyscall{Number: -1}, nil
	}
	nr, ok := parseUint(f)
	if !ok || nr > 1<<20 {
		return TaskSyscall{}, parseErr(path, "syscall number")
	}
	s := TaskSyscall{Number: int(nr)}
	for k := range s.Args {
		f, i = nextField(b, i)
		v, ok := parseHex(f)
		if !ok {
			return TaskSyscall{}, parseErr(path, "syscall argument")
		}
		s.Args[k] = v
	}
	return s, nil
}

// parseHex parses "0x1f" (the 0x is required, as the kernel writes it).
func parseHex(b []byte) (uint64, bool) {
	if len(b) < 3 || b[0] != '0' || b[1] != 'x' || len(b) > 18 {
		return 0, false
	}
	var v uint64
	for _, c := range b[2:] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}
