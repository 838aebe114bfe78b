package procfs

import "strings"

// FDKind is what an open file descriptor refers to, from the target of its
// /proc/PID/fd/N symlink.
type FDKind int

// The kinds of fd target. Anonymous inodes name their kind in brackets;
// pipes and sockets carry an inode number; anything starting with '/' is a
// path (a regular file, a device, a FIFO in the file system).
const (
	FDUnknown   FDKind = iota
	FDPipe             // pipe:[12345]
	FDSocket           // socket:[12345]
	FDEventFD          // anon_inode:[eventfd]
	FDEventPoll        // anon_inode:[eventpoll]
	FDAnonInode        // any other anon_inode:..., e.g. [timerfd], [signalfd], inotify
	FDPath             // /dev/sda, /var/log/x.log
)

// ParseFDTarget classifies an fd link target.
func ParseFDTarget(target string) FDKind {
	switch {
	case strings.HasPrefix(target, "pipe:["):
		return FDPipe
	case strings.HasPrefix(target, "socket:["):
		return FDSocket
	case target == "anon_inode:[eventfd]":
		return FDEventFD
	case target == "anon_inode:[eventpoll]":
		return FDEventPoll
	case strings.HasPrefix(target, "anon_inode:"):
		return FDAnonInode
	case strings.HasPrefix(target, "/"):
		return FDPath
	}
	return FDUnknown
}
