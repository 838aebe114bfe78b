// Package procfs reads and parses the kernel files ctxtop needs. Reading is
// kept apart from parsing: every parse function is pure, takes the file's
// bytes and is table- and fuzz-tested; the FS methods do the I/O.
package procfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// every procfs since Linux 2.6 has, and returns an FS for it.
func NewFS(root string) (FS, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return FS{}, fmt.Errorf("%w: %s", ErrNotProcfs, root)
	}
	if !fi.IsDir() {
		return FS{}, fmt.Errorf("%w: %s is not a directory", ErrNotProcfs, root)
	}
	fs := FS{root: filepath.Clean(root)}
	if _, err := fs.Stat(); err != nil {
		return FS{}, fmt.Errorf("%w: %s (no usable stat file)", ErrNotProcfs, root)
	}
	return fs, nil
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
