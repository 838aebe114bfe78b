//go:build !amd64

package waitreason

import "golang.org/x/sys/unix"

// Calls that newer architectures (arm64, riscv64) only have in their
// p- or 4-suffixed forms.
const (
	sysAccept        = unix.SYS_ACCEPT
	sysEpollWait     = -1
	sysPoll          = -1
	sysSelect        = -1
	sysPause         = -1
	sysSyncFileRange = unix.SYS_SYNC_FILE_RANGE
)
