package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

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

// warnSkipped says in one line which --pid targets were already gone at
// start: the run goes on with the others, as pidstat's does, since
// -p $(pgrep -d, java) races with the processes it lists.
func warnSkipped(w io.Writer, skipped []int) {
	if len(skipped) == 0 {
		return
	}
	ids := make([]string, len(skipped))
	for i, pid := range skipped {
		ids[i] = strconv.Itoa(pid)
	}
	fmt.Fprintf(w, "ctxtop: no such process: %s; watching the other --pid processes\n", strings.Join(ids, ", "))
}
