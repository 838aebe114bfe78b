package sampler

import (
	"errors"

	"golang.org/x/sys/unix"
)

// ErrTargetsGone means every process given with Config.PIDs has exited.
var ErrTargetsGone = errors.New("every watched process has exited")

// ErrNoSuchProcess means a process given with Config.PIDs is not in the
// procfs: gone, never there, or hidden from this user (hidepid).
var ErrNoSuchProcess = errors.New("no such process")

// outcome is what reading one thread came to.
type outcome int

const (
	updated outcome = iota
	// gone: the thread exited, normal life in /proc, not counted.
	gone
	// unreadable: the thread exists but a file could not be read or
	// parsed; counted in Sample.Unreadable.
	unreadable
)

// isGone reports an error that means the task exited: normal life in /proc.
func isGone(err error) bool {
	return err == unix.ENOENT || err == unix.ESRCH || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

func classify(err error) outcome {
	if isGone(err) {
		return gone
	}
	return unreadable
}
