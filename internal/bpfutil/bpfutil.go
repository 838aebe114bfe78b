// Package bpfutil holds what the eBPF packages (the wake-up tracer, the
// stack tracer, the task walk) say and read alike: a verifier's error in
// one line, the kernel's release for it, and a task name from a map value.
package bpfutil

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// FirstLine is the first line of err's text: the verifier's log follows
// it, pages of it, which is no message for a terminal.
func FirstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// KernelRelease is uname's release, "?" when it cannot be read.
func KernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "?"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// Comm turns a kernel task name as a BPF map holds it into a string safe
// for a terminal: a name is whatever a program set with prctl, escape
// sequences included.
func Comm(c *[16]int8) string {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&c[0])), len(c))
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return sanitize.Name(string(b))
}
