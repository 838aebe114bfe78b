package sampler

import (
	"unsafe"

	"golang.org/x/sys/unix"
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

func openat(dirfd int, path []byte, flags int) (int, error) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return -1, unix.EINVAL
	}
	for {
		fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
			uintptr(flags|unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return -1, e
		}
		return int(fd), nil
	}
}

func pread(fd int, buf []byte) (int, error) { return preadRaw(fd, buf) }

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

// readAll preads fd from offset 0 into *buf, growing it until the file fits.
// procfs files are generated on read, so a short read means the end.
func readAll(fd int, buf *[]byte) (int, error) {
	for {
		n, err := pread(fd, *buf)
		if err != nil {
			return 0, err
		}
		if n < len(*buf) {
			return n, nil
		}
		*buf = make([]byte, 2*len(*buf))
	}
}

// readFileAt opens path relative to dirfd, reads it whole and closes it.
func readFileAt(dirfd int, path []byte, buf *[]byte) (int, error) {
	fd, err := openat(dirfd, path, 0)
	if err != nil {
		return 0, err
	}
	n, err := readAll(fd, buf)
	closeFD(fd)
	return n, err
}

// readDirInts lists the decimal names in the directory at path (relative to
// dirfd), appending them to dst. Other names (self, net, ...) are skipped.
func readDirInts(dirfd int, path []byte, buf []byte, dst []int) ([]int, error) {
	fd, err := openat(dirfd, path, unix.O_DIRECTORY)
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
			if c < '0' || c > '9' || v > 1<<30 {
				ok = false
				break
			}
			v, ok = v*10+int(c-'0'), true
		}
		if ok {
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
