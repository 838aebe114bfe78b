package procfs

import (
	"os"
	"strconv"
)

// TaskComm reads <root>/PID/task/TID/comm: the thread's name (at most 15
// bytes, set by prctl(PR_SET_NAME) or pthread_setname_np), newline-terminated.
func (fs FS) TaskComm(pid, tid int) (string, error) {
	p := fs.Path(strconv.Itoa(pid), "task", strconv.Itoa(tid), "comm")
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return string(ParseComm(b)), nil
}

// ParseComm strips the trailing newline of a comm file.
func ParseComm(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return b[:n-1]
	}
	return b
}
