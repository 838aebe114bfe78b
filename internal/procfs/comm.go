package procfs

import (
	"strconv"
	"unicode/utf8"
)

// TaskComm reads <root>/PID/task/TID/comm: the thread's name (at most 15
// bytes, set by prctl(PR_SET_NAME) or pthread_setname_np), newline-terminated.
func (fs FS) TaskComm(pid, tid int) (string, error) {
	p := fs.Path(strconv.Itoa(pid), "task", strconv.Itoa(tid), "comm")
	b, err := ReadFile(p, LimitLine)
	if err != nil {
		return "", err
	}
	return string(ParseComm(b)), nil
}

// MaxComm bounds a name: the kernel keeps 15 bytes for a thread's own name,
// and prints at most 63 for kernel threads and workqueue workers
// ("kworker/u8:2-events_unbound"). A --proc tree can hold a comm of any
// length; more than MaxComm bytes is cut.
const MaxComm = 64

// ParseComm strips the trailing newline of a comm file and cuts it to
// MaxComm bytes, never inside a UTF-8 sequence. The bytes are otherwise raw:
// callers pass them through sanitize.Name before printing.
func ParseComm(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return CutComm(b)
}

// CutComm cuts a raw name (a comm file's without its newline, or stat's) to
// MaxComm bytes, never inside a UTF-8 sequence.
func CutComm(b []byte) []byte {
	if len(b) > MaxComm {
		b = b[:MaxComm]
		// Back off over a sequence the cut split; a byte that was never
		// valid stays, for sanitize to replace.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return b
}
