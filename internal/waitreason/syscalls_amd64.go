package waitreason

import "golang.org/x/sys/unix"

const (
	sysAccept        = unix.SYS_ACCEPT
	sysEpollWait     = unix.SYS_EPOLL_WAIT
	sysPoll          = unix.SYS_POLL
	sysSelect        = unix.SYS_SELECT
	sysPause         = unix.SYS_PAUSE
	sysSyncFileRange = unix.SYS_SYNC_FILE_RANGE
)
