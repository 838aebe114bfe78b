package procfs

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// maxSmallFile bounds every read of the small per-task and cgroup files
// this package reads by path: none is near it, and a fixture tree holding a
// device or a FIFO in a file's place cannot make ctxtop read forever.
const maxSmallFile = 64 << 10

// errTooLarge means a file that should be a few lines was not.
var errTooLarge = errors.New("file too large")

// readSmall reads a small kernel file without ever blocking: O_NONBLOCK
// makes a FIFO in a fixture tree return at once instead of waiting for a
// writer, and the read stops at maxSmallFile.
func readSmall(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= maxSmallFile {
				return nil, &os.PathError{Op: "read", Path: path, Err: errTooLarge}
			}
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return buf, nil
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
