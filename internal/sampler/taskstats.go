package sampler

import (
	"encoding/binary"
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's taskstats interface (generic netlink family "TASKSTATS")
// answers TASKSTATS_CMD_GET for a TGID with sums over every thread of the
// process: times scheduled in (cpu_count, with delay accounting on),
// voluntary and involuntary switches, user and system time. If none of them
// moved since the last pass, no thread of that process ran, so none of its
// per-thread files can have changed and the sampler skips them all. One
// query costs about as much as three schedstat reads, so it pays for
// processes with more threads than that; a 10,000-thread process that sat
// idle costs one query instead of 10,000 reads. It needs CAP_NET_ADMIN; without
// it ctxtop reads every thread, as before.

// activity is what the gate compares between passes.
type activity struct {
	timeslices uint64
	switches   uint64
	cpuMicros  uint64
}

var errTaskstatsUnusable = errors.New("taskstats reply unusable")

type taskstatsConn struct {
	fd  int
	req []byte
	buf []byte
}

const (
	nlmsgHdrLen  = 16
	genlHdrLen   = 4
	reqPIDOffset = nlmsgHdrLen + genlHdrLen + 4
)

func openTaskstats() (*taskstatsConn, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return nil, err
	}
	c := &taskstatsConn{fd: fd, buf: make([]byte, 4096)}
	// Replies come back at once from the caller's own syscall; the timeout
	// only guards against a kernel that never answers.
	tv := unix.Timeval{Sec: 1}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		c.close()
		return nil, err
	}
	if err := unix.Connect(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		c.close()
		return nil, err
	}
	family, err := c.resolveFamily()
	if err != nil {
		c.close()
		return nil, err
	}
	c.req = genlRequest(family, unix.TASKSTATS_CMD_GET, unix.TASKSTATS_CMD_ATTR_TGID, make([]byte, 4))
	// Probe with our own process: proves the permission and the reply layout.
	if _, err := c.query(unix.Getpid()); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *taskstatsConn) close() {
	if c.fd >= 0 {
		closeFD(c.fd)
		c.fd = -1
	}
}

func genlRequest(family uint16, cmd uint8, attrType uint16, payload []byte) []byte {
	alen := 4 + len(payload)
	b := make([]byte, nlmsgHdrLen+genlHdrLen+(alen+3)&^3)
	binary.NativeEndian.PutUint32(b[0:], uint32(len(b)))
	binary.NativeEndian.PutUint16(b[4:], family)
	binary.NativeEndian.PutUint16(b[6:], unix.NLM_F_REQUEST)
	b[16] = cmd
	b[17] = 1 // genl version
	binary.NativeEndian.PutUint16(b[20:], uint16(alen))
	binary.NativeEndian.PutUint16(b[22:], attrType)
	copy(b[24:], payload)
	return b
}

// roundTrip sends a request and reads the reply with raw syscalls: the
// kernel answers within the send, so the read never waits (see rawcalls.go).
func (c *taskstatsConn) roundTrip(req []byte) ([]byte, error) {
	for {
		_, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(c.fd), uintptr(unsafe.Pointer(&req[0])), uintptr(len(req)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return nil, e
		}
		break
	}
	for {
		n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(c.fd), uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return nil, e
		}
		return c.buf[:n], nil
	}
}

func (c *taskstatsConn) resolveFamily() (uint16, error) {
	reply, err := c.roundTrip(genlRequest(unix.GENL_ID_CTRL, unix.CTRL_CMD_GETFAMILY, unix.CTRL_ATTR_FAMILY_NAME, []byte("TASKSTATS\x00")))
	if err != nil {
		return 0, err
	}
	body, err := nlBody(reply)
	if err != nil {
		return 0, err
	}
	for a := range attrs(body) {
		if a.typ == unix.CTRL_ATTR_FAMILY_ID && len(a.data) >= 2 {
			return binary.NativeEndian.Uint16(a.data), nil
		}
	}
	return 0, errTaskstatsUnusable
}

// query asks for the process-wide sums of tgid.
func (c *taskstatsConn) query(tgid int) (activity, error) {
	binary.NativeEndian.PutUint32(c.req[reqPIDOffset:], uint32(tgid))
	reply, err := c.roundTrip(c.req)
	if err != nil {
		return activity{}, err
	}
	return parseTaskstatsReply(reply)
}

// nlBody checks a netlink reply and returns what follows the generic netlink
// header, or the kernel's errno.
func nlBody(b []byte) ([]byte, error) {
	if len(b) < nlmsgHdrLen {
		return nil, errTaskstatsUnusable
	}
	l := int(binary.NativeEndian.Uint32(b))
	if l < nlmsgHdrLen || l > len(b) {
		return nil, errTaskstatsUnusable
	}
	if binary.NativeEndian.Uint16(b[4:]) == unix.NLMSG_ERROR {
		if l < nlmsgHdrLen+4 {
			return nil, errTaskstatsUnusable
		}
		if e := -int32(binary.NativeEndian.Uint32(b[16:])); e > 0 {
			return nil, unix.Errno(e)
		}
		return nil, errTaskstatsUnusable
	}
	if l < nlmsgHdrLen+genlHdrLen {
		return nil, errTaskstatsUnusable
	}
	return b[nlmsgHdrLen+genlHdrLen : l], nil
}

type nlattr struct {
	typ  uint16
	data []byte
}

// attrs walks netlink attributes, stopping at the first malformed one.
func attrs(b []byte) func(func(nlattr) bool) {
	return func(yield func(nlattr) bool) {
		for len(b) >= 4 {
			l := int(binary.NativeEndian.Uint16(b))
			if l < 4 || l > len(b) {
				return
			}
			if !yield(nlattr{typ: binary.NativeEndian.Uint16(b[2:]) &^ unix.NLA_F_NESTED, data: b[4:l]}) {
				return
			}
			if a := (l + 3) &^ 3; a < len(b) {
				b = b[a:]
			} else {
				return
			}
		}
	}
}

var (
	offCPUCount = int(unsafe.Offsetof(unix.Taskstats{}.Cpu_count))
	offNvcsw    = int(unsafe.Offsetof(unix.Taskstats{}.Nvcsw))
	offNivcsw   = int(unsafe.Offsetof(unix.Taskstats{}.Nivcsw))
	offUtime    = int(unsafe.Offsetof(unix.Taskstats{}.Ac_utime))
	offStime    = int(unsafe.Offsetof(unix.Taskstats{}.Ac_stime))
	needLen     = max(offCPUCount, offNvcsw, offNivcsw, offUtime, offStime) + 8
)

// parseTaskstatsReply takes the struct taskstats out of a TASKSTATS_CMD_GET
// reply: AGGR_TGID { TGID, STATS }.
func parseTaskstatsReply(b []byte) (activity, error) {
	body, err := nlBody(b)
	if err != nil {
		return activity{}, err
	}
	for outer := range attrs(body) {
		if outer.typ != unix.TASKSTATS_TYPE_AGGR_TGID && outer.typ != unix.TASKSTATS_TYPE_AGGR_PID {
			continue
		}
		for in := range attrs(outer.data) {
			if in.typ != unix.TASKSTATS_TYPE_STATS {
				continue
			}
			s := in.data
			if len(s) < needLen {
				return activity{}, errTaskstatsUnusable
			}
			u := func(off int) uint64 { return binary.NativeEndian.Uint64(s[off:]) }
			return activity{
				timeslices: u(offCPUCount),
				switches:   u(offNvcsw) + u(offNivcsw),
				cpuMicros:  u(offUtime) + u(offStime),
			}, nil
		}
	}
	return activity{}, errTaskstatsUnusable
}
