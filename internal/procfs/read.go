package procfs

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A --proc tree can hold anything: a FIFO or a device where a kernel file
// should be, a symlink to /dev/zero or to itself, a file of any size. Every
// procfs file ctxtop reads is therefore opened O_NONBLOCK (opening a FIFO
// never waits for a writer), O_NOFOLLOW (the files ctxtop reads are never
// symlinks in a real procfs), checked with fstat to be a regular file, and
// read only up to a cap for its kind. Real procfs files are all far below
// their caps; a file above its cap is refused, not truncated, because a
// truncated counter file would parse into wrong numbers.
const (
	// LimitLine is for one-line files: schedstat, comm, loadavg,
	// pressure/cpu and a task's stat (52 numbers and a name of at most
	// 64 bytes: under 1.5 KiB).
	LimitLine = 4 << 10
	// LimitStatus is for a task's status and sched (1.5–3 KiB; the
	// Cpus_allowed masks of an 8,192-CPU host add under 5 KiB).
	LimitStatus = 64 << 10
	// LimitStat is for /proc/stat: ~120 bytes per CPU plus one count per
	// interrupt line, under 2 MiB at 8,192 CPUs and 10,000 IRQs.
	LimitStat = 4 << 20
	// LimitInterrupts is for /proc/interrupts: one row per IRQ with an
	// 11-byte column per CPU. 1,500 IRQs on a 448-CPU host come to about
	// 7 MiB; 32 MiB leaves room for bigger hosts.
	LimitInterrupts = 32 << 20
)

// OpenFlags are the flags every procfs file is opened with.
const OpenFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW

var (
	// ErrNotRegular means a path that should be a kernel file is a FIFO,
	// device, socket, directory or symlink.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge means a file is bigger than the cap for its kind.
	ErrTooLarge = errors.New("larger than any real procfs file of its kind")
)

// CheckRegular returns ErrNotRegular unless fd is a regular file. The
// fstat is a raw system call (it never blocks), so the sampler's raw reads
// use it too without waking the runtime's sysmon.
func CheckRegular(fd int) error {
	var st unix.Stat_t
	if _, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(&st)), 0); e != 0 {
		return e
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ErrNotRegular
	}
	return nil
}

// ReadFile reads path as described above: non-blocking, regular files only,
// at most limit bytes. Errors from open keep their errno (ENOENT means the
// task exited; ELOOP a symlink, a loop or not).
func ReadFile(path string, limit int) ([]byte, error) {
	fd, err := openRetry(path)
	if err != nil {
		return nil, &PathError{Path: path, Err: err}
	}
	defer unix.Close(fd)
	if err := CheckRegular(fd); err != nil {
		return nil, &PathError{Path: path, Err: err}
	}
	buf := make([]byte, min(limit+1, 4096))
	n := 0
	for {
		if n == len(buf) {
			if n > limit {
				return nil, &PathError{Path: path, Err: ErrTooLarge}
			}
			buf = append(buf, make([]byte, min(len(buf), limit+1-len(buf)))...)
		}
		m, err := unix.Read(fd, buf[n:])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &PathError{Path: path, Err: err}
		case m == 0:
			return buf[:n], nil
		}
		n += m
		if n > limit {
			return nil, &PathError{Path: path, Err: ErrTooLarge}
		}
	}
}

func openRetry(path string) (int, error) {
	for {
		fd, err := unix.Open(path, OpenFlags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// PathError is a read failure with the file it concerns. Unwrap gives the
// errno or ErrNotRegular / ErrTooLarge.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *PathError) Unwrap() error { return e.Err }
