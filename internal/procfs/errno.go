package procfs

import "golang.org/x/sys/unix"

var errNotSupported error = unix.EOPNOTSUPP
