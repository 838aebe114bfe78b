package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// hidepidMode is the --proc mount's hidepid mode ("noaccess", "invisible",
// "ptraceable") when it hides other users' processes from this user, else
// "". A root that is no procfs mount (a fixture tree) hides nothing.
func hidepidMode(root string) string {
	fs, err := procfs.NewFS(root)
	if err != nil {
		return ""
	}
	m, found, err := fs.ProcMount()
	if err != nil || !found {
		return ""
	}
	groups, _ := os.Getgroups()
	if !m.HidesFrom(os.Geteuid(), append(groups, os.Getegid())) {
		return ""
	}
	return m.HidePID
}

// pidError says that a --pid the procfs does not show may be hidden rather
// than gone, when the mount hides processes.
func pidError(err error, root string) error {
	if !errors.Is(err, sampler.ErrNoSuchProcess) {
		return err
	}
	if mode := hidepidMode(root); mode != "" {
		return fmt.Errorf("%w, or hidden: %s is mounted hidepid=%s, which hides other users' processes from uid %d",
			err, sanitize.Name(root), mode, os.Geteuid())
	}
	return err
}
