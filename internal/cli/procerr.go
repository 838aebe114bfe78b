package cli

import (
	"errors"
	"fmt"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// procError names the flag when the --proc root is unusable:
// "--proc /nonexistent: no such directory"; a --pid it does not show may be
// hidden from this user (pidError).
func procError(err error, root string) error {
	var re *procfs.RootError
	if errors.As(err, &re) {
		return fmt.Errorf("--proc %w", err)
	}
	return pidError(err, root)
}
