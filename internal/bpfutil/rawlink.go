package bpfutil

import (
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// RawLink is an attached program: the fd of its BPF link, made and closed
// with raw system calls. The wake-up tracer detaches its switch program
// from a timer between two refreshes, while the monitor is otherwise
// asleep, and the task walk attaches and detaches its hooks within a
// sampling pass. An ordinary system call there (cilium's link.Close is
// one) wakes the Go runtime's sysmon thread from its sleep with its
// polling reset to every 20 µs, which it then keeps up through the next
// sampling pass: about 50 switches of its own and as many preemptions of
// the sampling thread, each refresh. A raw one wakes nothing.
type RawLink struct{ fd int }

// AttachRaw attaches a tp_btf program to its tracepoint:
// BPF_RAW_TRACEPOINT_OPEN with no name takes the tracepoint from the
// program, on every kernel that loads such programs (5.5 and later). The
// error is the system call's.
func AttachRaw(p *ebpf.Program) (*RawLink, error) {
	attr := struct {
		name   uint64
		progFD uint32
		_      uint32
	}{progFD: uint32(p.FD())}
	fd, _, e := unix.RawSyscall(unix.SYS_BPF, unix.BPF_RAW_TRACEPOINT_OPEN, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if e != 0 {
		return nil, e
	}
	return &RawLink{fd: int(fd)}, nil
}

// Close detaches the program.
func (l *RawLink) Close() error {
	if _, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(l.fd), 0, 0); e != 0 {
		return e
	}
	return nil
}
