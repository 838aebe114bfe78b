// Package waitreason names what a blocked thread waits on, in the words a user
// knows ("futex wait", "pipe read", "sleep"), from what the kernel shows:
// the system call a thread is in (/proc/PID/task/TID/syscall), the kind of
// file its fd argument is open on (/proc/PID/fd/N), and the kernel
// function it sleeps in (/proc/PID/task/TID/wchan). Every word comes from
// the one table below.
package waitreason

import (
	"strings"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// Observation is one look at a sleeping thread.
type Observation struct {
	// Syscall is the system call number, NoSyscall when it could not be
	// read (not permitted) or the thread was outside a call.
	Syscall int
	// FD is the kind of file Args[0] is open on, for calls that take an fd.
	FD procfs.FDKind
	// Wchan is the kernel function it sleeps in; "" when unknown.
	Wchan string
}

// NoSyscall marks an Observation without a usable syscall number.
const NoSyscall = -1

// Call families: what a system call does with its first argument.
type family int

const (
	famNone  family = iota
	famRead         // read-like on Args[0]
	famWrite        // write-like on Args[0]
)

// entry is one row of the table: a reason and everything that maps to it.
type entry struct {
	// Reason is the word in JSON's wait_on and in the detail view.
	Reason string
	// Short is the word in the WHY column: entries that share it add up
	// there ("pipe" for pipe read and pipe write).
	Short string
	// calls are system calls that mean this reason whatever the fd.
	calls []int
	// family and fd match a read- or write-like call on this kind of fd.
	family family
	fds    []procfs.FDKind
	// wchans are substrings of kernel function names that mean it when the
	// system call is unknown (not permitted, or not in the table).
	wchans []string
}

// table is the only place reasons are defined. Order matters: the first
// matching row wins, so fd-specific rows come before catch-alls.
var table = []entry{
	{Reason: "futex wait", Short: "futex", calls: []int{sysFutex, sysFutexWaitv}, wchans: []string{"futex"}},
	{Reason: "pipe read", Short: "pipe", family: famRead, fds: []procfs.FDKind{procfs.FDPipe}, wchans: []string{"pipe_read", "pipe_wait_readable"}},
	{Reason: "pipe write", Short: "pipe", family: famWrite, fds: []procfs.FDKind{procfs.FDPipe}, wchans: []string{"pipe_write", "pipe_wait_writable"}},
	{Reason: "socket recv", Short: "socket", family: famRead, fds: []procfs.FDKind{procfs.FDSocket},
		calls:  []int{sysRecvfrom, sysRecvmsg, sysRecvmmsg},
		wchans: []string{"unix_stream_read", "unix_stream_data_wait", "unix_dgram_recvmsg", "sk_wait_data", "tcp_recvmsg", "skb_wait_for_more_packets", "udp_recvmsg"}},
	{Reason: "socket send", Short: "socket", family: famWrite, fds: []procfs.FDKind{procfs.FDSocket},
		calls: []int{sysSendto, sysSendmsg, sysSendmmsg}, wchans: []string{"sk_stream_wait_memory", "sock_alloc_send"}},
	{Reason: "socket accept", Short: "accept", calls: []int{sysAccept, sysAccept4}, wchans: []string{"inet_csk_accept", "unix_accept"}},
	{Reason: "epoll wait", Short: "epoll", calls: []int{sysEpollWait, sysEpollPwait, sysEpollPwait2}, wchans: []string{"ep_poll", "epoll_wait"}},
	{Reason: "poll", Short: "poll", calls: []int{sysPoll, sysPpoll, sysSelect, sysPselect6}, wchans: []string{"do_sys_poll", "do_select", "core_sys_select", "poll_schedule_timeout"}},
	{Reason: "eventfd read", Short: "eventfd", family: famRead, fds: []procfs.FDKind{procfs.FDEventFD}, wchans: []string{"eventfd_read"}},
	{Reason: "sleep", Short: "sleep", calls: []int{sysNanosleep, sysClockNanosleep}, wchans: []string{"nanosleep", "common_nsleep"}},
	{Reason: "I/O", Short: "I/O", family: famRead | famWrite, fds: []procfs.FDKind{procfs.FDPath},
		calls:  []int{sysFsync, sysFdatasync, sysSyncFileRange},
		wchans: []string{"io_schedule", "folio_wait", "wait_on_page", "bit_wait_io", "wait_on_buffer", "blk_mq_get_tag", "jbd2_", "nfs_", "rpc_wait"}},
	{Reason: "child wait", Short: "child", calls: []int{sysWait4, sysWaitid}, wchans: []string{"do_wait", "kernel_wait4"}},
	{Reason: "signal wait", Short: "signal", calls: []int{sysRtSigtimedwait, sysRtSigsuspend, sysPause}, wchans: []string{"sigtimedwait", "sigsuspend", "sys_pause"}},
}

// otherPrefix starts the reason of a wchan the table does not know.
const otherPrefix = "other: "

// Reason maps an observation to its reason, or "" when there is nothing to
// say (the thread was running, or nothing could be read): such a look is
// not counted.
func Reason(o Observation) string {
	// Only a call number >= 0 is looked up, so the -1 of a call an
	// architecture lacks (syscalls_other.go) never matches.
	if o.Syscall >= 0 {
		fam := familyOf(o.Syscall)
		for i := range table {
			e := &table[i]
			for _, c := range e.calls {
				if c == o.Syscall {
					return e.Reason
				}
			}
			if fam != famNone && e.family&fam != 0 {
				for _, k := range e.fds {
					if k == o.FD {
						return e.Reason
					}
				}
			}
		}
	}
	if o.Wchan == "" {
		return ""
	}
	if r := byFunction(o.Wchan); r != "" {
		return r
	}
	return otherPrefix + o.Wchan
}

// byFunction is the table's reason for kernel function fn, "" when no
// row names it.
func byFunction(fn string) string {
	for i := range table {
		for _, w := range table[i].wchans {
			if strings.Contains(fn, w) {
				return table[i].Reason
			}
		}
	}
	return ""
}

// Switched is the reason of a thread found switched out in kernel
// function fn (the first frame of its kernel stack) while not asleep: one
// a wake-up has made runnable, still in the function it slept in until a
// CPU runs it. Only a function of the table counts: any other is where
// the thread was preempted (on its way back to user space, say), which is
// no wait, so it gives "".
func Switched(fn string) string { return byFunction(fn) }

// Short is the WHY column's word for a reason: "futex" for "futex wait",
// the kernel function itself for "other: <wchan>".
func Short(reason string) string {
	if w, ok := strings.CutPrefix(reason, otherPrefix); ok {
		return w
	}
	for i := range table {
		if table[i].Reason == reason {
			return table[i].Short
		}
	}
	return reason
}

// TakesFD reports whether the call's first argument is an fd whose kind
// decides the reason, so the caller knows to resolve /proc/PID/fd/N.
func TakesFD(nr int) bool { return nr >= 0 && familyOf(nr) != famNone }

// familyOf is the family of call nr, which must be >= 0 (see Reason).
func familyOf(nr int) family {
	for _, c := range readCalls {
		if c == nr {
			return famRead
		}
	}
	for _, c := range writeCalls {
		if c == nr {
			return famWrite
		}
	}
	return famNone
}

var (
	readCalls  = []int{sysRead, sysReadv, sysPread64, sysPreadv, sysPreadv2, sysRecvfrom, sysRecvmsg, sysRecvmmsg}
	writeCalls = []int{sysWrite, sysWritev, sysPwrite64, sysPwritev, sysPwritev2, sysSendto, sysSendmsg, sysSendmmsg}
)
