package waitreason

import "golang.org/x/sys/unix"

// Numbers every Linux architecture has; those some lack (poll, select,
// epoll_wait, pause on arm64) live in the per-architecture files, with -1
// where absent.
const (
	sysFutex          = unix.SYS_FUTEX
	sysFutexWaitv     = unix.SYS_FUTEX_WAITV
	sysRead           = unix.SYS_READ
	sysReadv          = unix.SYS_READV
	sysPread64        = unix.SYS_PREAD64
	sysPreadv         = unix.SYS_PREADV
	sysPreadv2        = unix.SYS_PREADV2
	sysWrite          = unix.SYS_WRITE
	sysWritev         = unix.SYS_WRITEV
	sysPwrite64       = unix.SYS_PWRITE64
	sysPwritev        = unix.SYS_PWRITEV
	sysPwritev2       = unix.SYS_PWRITEV2
	sysRecvfrom       = unix.SYS_RECVFROM
	sysRecvmsg        = unix.SYS_RECVMSG
	sysRecvmmsg       = unix.SYS_RECVMMSG
	sysSendto         = unix.SYS_SENDTO
	sysSendmsg        = unix.SYS_SENDMSG
	sysSendmmsg       = unix.SYS_SENDMMSG
	sysAccept4        = unix.SYS_ACCEPT4
	sysEpollPwait     = unix.SYS_EPOLL_PWAIT
	sysEpollPwait2    = unix.SYS_EPOLL_PWAIT2
	sysPpoll          = unix.SYS_PPOLL
	sysPselect6       = unix.SYS_PSELECT6
	sysNanosleep      = unix.SYS_NANOSLEEP
	sysClockNanosleep = unix.SYS_CLOCK_NANOSLEEP
	sysFsync          = unix.SYS_FSYNC
	sysFdatasync      = unix.SYS_FDATASYNC
	sysWait4          = unix.SYS_WAIT4
	sysWaitid         = unix.SYS_WAITID
	sysRtSigtimedwait = unix.SYS_RT_SIGTIMEDWAIT
	sysRtSigsuspend   = unix.SYS_RT_SIGSUSPEND
)
