package cli

import (
	"errors"
	"fmt"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// procError names the flag when the --proc root is unusable:
// "--proc /nonexistent: no such directory".
func procError(err error) error {
	var re *procfs.RootError
	if errors.As(err, &re) {
		return fmt.Errorf("--proc %w", err)
	}
	return err
}
