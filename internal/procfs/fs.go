// Package procfs reads and parses the kernel files ctxtop needs. Reading is
// kept apart from parsing: every parse function is pure, takes the file's
// bytes and is table- and fuzz-tested; the FS methods do the I/O.
package procfs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/sanitize"
)

var (
	// ErrParse wraps every malformed-content error, with the file and field.
	ErrParse = errors.New("malformed")
	// ErrNotProcfs means the root given does not look like a procfs mount.
	ErrNotProcfs = errors.New("not a procfs")
)

// FS is a procfs tree rooted anywhere: /proc in production, a fixture tree in
// tests. Nothing in ctxtop hard-codes /proc.
type FS struct {
	root string
}

// NewFS checks that root holds a readable stat file with a ctxt line, which
// every procfs since Linux 2.6 has, and returns an FS for it. Its errors
// match ErrNotProcfs and read "ROOT: no such directory", "ROOT: not a
// directory" or "ROOT: not a procfs (...)".
func NewFS(root string) (FS, error) {
	fi, err := os.Stat(root)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return FS{}, &RootError{Root: root, Problem: "no such directory"}
	case err != nil:
		return FS{}, &RootError{Root: root, Problem: errnoText(err)}
	case !fi.IsDir():
		return FS{}, &RootError{Root: root, Problem: "not a directory"}
	}
	fs := FS{root: filepath.Clean(root)}
	if _, err := fs.Stat(); err != nil {
		return FS{}, &RootError{Root: root, Problem: "not a procfs (no usable stat file: " + errnoText(err) + ")"}
	}
	return fs, nil
}

// Unchecked is an FS for root without NewFS's check: for the load
// generator, which reads its own threads under the procfs it runs with,
// where NewFS would read /proc/stat for nothing, and for its fixtures.
func Unchecked(root string) FS { return FS{root: filepath.Clean(root)} }

// RootError is a procfs root that cannot be used. It matches ErrNotProcfs.
type RootError struct {
	Root, Problem string
}

func (e *RootError) Error() string        { return sanitize.Name(e.Root) + ": " + e.Problem }
func (e *RootError) Is(target error) bool { return target == ErrNotProcfs }

// errnoText is the bare reason of a file error, without the path it names.
func errnoText(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if errors.Is(err, ErrNotRegular) || errors.Is(err, ErrTooLarge) {
		return errors.Unwrap(err).Error()
	}
	return sanitize.Name(err.Error())
}

// Root is the directory the FS reads from.
func (fs FS) Root() string { return fs.root }

// Path joins elements under the root.
func (fs FS) Path(elem ...string) string {
	return filepath.Join(append([]string{fs.root}, elem...)...)
}

func parseErr(path, field string) error {
	return fmt.Errorf("%w: %s: %q", ErrParse, path, field)
}
