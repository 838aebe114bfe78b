package procfs

// ParseTaskStackTop returns the function of the first frame in
// /proc/PID/task/TID/stack, the thread's kernel stack as the kernel last
// saved it:
//
//	[<0>] futex_do_wait+0x46/0x90
//	[<0>] __futex_wait+0x8a/0x100
//	...
//
// The scheduler's own frames are left out, so for a thread switched out
// the first frame is the function that gave up the CPU: the one wchan
// names while the thread sleeps, and still there once a wake-up has made
// it runnable again but no CPU has run it yet (wchan then reads "0", and
// syscall "running"). The address in brackets is 0 unless the reader may
// see kernel addresses; a module's function may be followed by " [mod]".
// An empty file (a thread with no stack, or gone) gives nothing. Only the
// first line is read, so b may end anywhere after it. The file is
// readable by root alone (CAP_SYS_ADMIN): others get EACCES on open.
func ParseTaskStackTop(b []byte, path string) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b) < 2 || b[0] != '[' || b[1] != '<' {
		return nil, parseErr(path, "stack frame")
	}
	i := 2
	for i < len(b) && b[i] != '>' {
		c := b[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') || i > 2+16 {
			return nil, parseErr(path, "stack frame address")
		}
		i++
	}
	if i+2 >= len(b) || b[i+1] != ']' || b[i+2] != ' ' {
		return nil, parseErr(path, "stack frame")
	}
	name := b[i+3:]
	end := 0
	for end < len(name) && name[end] != '+' && name[end] != ' ' && name[end] != '\n' {
		end++
	}
	if end == len(name) || name[end] != '+' {
		// The offset always follows a resolved name; a cut line or a
		// bare address is not a frame to name.
		return nil, parseErr(path, "stack frame")
	}
	name = name[:end]
	if len(name) == 0 || len(name) > maxSymbol {
		return nil, parseErr(path, "stack frame function")
	}
	for k, c := range name {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || k > 0 && (c >= '0' && c <= '9' || c == '.')
		if !ok {
			return nil, parseErr(path, "stack frame function")
		}
	}
	return name, nil
}
