package sampler

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// Thin syscall wrappers over NUL-terminated byte paths. unix.Open copies its
// string argument into a fresh buffer on every call; at 10,000 threads per
// tick that garbage is what these avoid.
//
// They are raw syscalls: procfs reads of a few hundred bytes never block for
// long, and a syscall announced to the Go scheduler wakes its sysmon thread
// when the program was idle, which then polls every 20 µs for a while. A
// monitor polling once a second paid ~16 context switches a second for that;
// raw calls leave sysmon asleep.
//
// Raw calls must never block, so a file is opened with procfs.OpenFlags
// (O_NONBLOCK: a FIFO's open does not wait for a writer; O_NOFOLLOW: no
// symlink to /dev/zero or to itself), refused unless fstat says it is a
// regular file, and read only up to the cap for its kind (procfs.Limit*).

// openat opens path relative to dirfd with flags, always read-only,
// close-on-exec and non-blocking.
func openat(dirfd int, path []byte, flags int) (int, error) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return -1, unix.EINVAL
	}
	for {
		fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
			uintptr(flags|unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(fd), nil
	}
}

// openFile opens a procfs file relative to dirfd and checks that it is a
// regular file.
func openFile(dirfd int, path []byte) (int, error) {
	fd, err := openat(dirfd, path, procfs.OpenFlags)
	if err != nil {
		return -1, err
	}
	if err := procfs.CheckRegular(fd); err != nil {
		closeFD(fd)
		return -1, err
	}
	return fd, nil
}

// openDir opens a directory relative to dirfd; a symlink in its place is
// refused, as none of the directories ctxtop lists is one in a real procfs.
func openDir(dirfd int, path []byte) (int, error) {
	return openat(dirfd, path, unix.O_DIRECTORY|unix.O_NOFOLLOW)
}

func closeFD(fd int) { unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

func getdents(fd int, buf []byte) (int, error) {
	for {
		n, _, e := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

// preadRaw is pread at offset 0, raw (see above).
func preadRaw(fd int, buf []byte) (int, error) {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}

// readAll preads fd from offset 0 into *buf, growing it until the file fits
// or is found to be over limit bytes (procfs.ErrTooLarge). procfs files are
// generated on read, so a short read means the end.
func readAll(fd int, buf *[]byte, limit int) (int, error) {
	for {
		b := *buf
		if len(b) > limit+1 {
			b = b[:limit+1]
		}
		n, err := preadRaw(fd, b)
		if err != nil {
			return 0, err
		}
		if n > limit {
			return 0, procfs.ErrTooLarge
		}
		if n < len(b) {
			return n, nil
		}
		grow := 2 * len(*buf)
		if grow >= limit {
			grow = limit + 1
		}
		*buf = make([]byte, grow)
	}
}

// readFileAt opens path relative to dirfd, reads it whole (up to limit
// bytes) and closes it.
func readFileAt(dirfd int, path []byte, buf *[]byte, limit int) (int, error) {
	fd, err := openFile(dirfd, path)
	if err != nil {
		return 0, err
	}
	n, err := readAll(fd, buf, limit)
	closeFD(fd)
	return n, err
}

// readDirInts lists the decimal names in the directory at path (relative to
// dirfd), appending them to dst. Other names (self, net, ...) are skipped.
func readDirInts(dirfd int, path []byte, buf []byte, dst []int) ([]int, error) {
	fd, err := openDir(dirfd, path)
	if err != nil {
		return dst, err
	}
	defer closeFD(fd)
	for {
		n, err := getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return dst, err
		}
		if n <= 0 {
			return dst, nil
		}
		dst = appendDirentInts(buf[:n], dst)
	}
}

// maxPID is the kernel's PID_MAX_LIMIT on 64-bit: no PID or TID is larger,
// so a directory can list at most this many tasks and a larger name is junk.
const maxPID = 4 << 20

// appendDirentInts walks linux_dirent64 records: ino u64, off s64,
// reclen u16, type u8, then the NUL-terminated name.
func appendDirentInts(b []byte, dst []int) []int {
	for len(b) >= 19 {
		reclen := int(b[16]) | int(b[17])<<8
		if reclen < 19 || reclen > len(b) {
			return dst
		}
		name := b[19:reclen]
		v, ok := 0, false
		for _, c := range name {
			if c == 0 {
				break
			}
			// A leading zero would name the same task twice ("0100").
			if c < '0' || c > '9' || v > maxPID || (c == '0' && v == 0) {
				ok = false
				break
			}
			v, ok = v*10+int(c-'0'), true
		}
		if ok && v <= maxPID {
			dst = append(dst, v)
		}
		b = b[reclen:]
	}
	return dst
}

// appendInt appends the decimal form of a non-negative v without allocating.
func appendInt(b []byte, v int) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}
