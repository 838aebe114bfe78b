package procfs

// maxSymbol bounds a kernel symbol name; longer content is not a wchan.
const maxSymbol = 128

// ParseWchan returns the function name in /proc/PID/task/TID/wchan: the
// kernel function a sleeping thread waits in ("futex_wait_queue",
// "pipe_read", "do_epoll_wait", "hrtimer_nanosleep", ...), with no newline.
// The kernel writes "0" for a thread that is running, and also for one the
// reader may not inspect (ptrace access is checked on read), so "0" means
// "unknown here" and gives nothing. Anything but one C identifier
// (optionally with a trailing newline) is malformed: the name reaches the
// screen.
func ParseWchan(b []byte, path string) ([]byte, error) {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if len(b) == 0 || string(b) == "0" {
		return nil, nil
	}
	if len(b) > maxSymbol {
		return nil, parseErr(path, "wchan")
	}
	for i, c := range b {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && (c >= '0' && c <= '9' || c == '.')
		if !ok {
			return nil, parseErr(path, "wchan")
		}
	}
	return b, nil
}
