package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// hostRootHelp is --host-root's help, alike in every command that reads a
// host.
const hostRootHelp = "root of the node's file system, as a node agent's container mounts the host's / (read-only): " +
	"reads DIR/proc (unless --proc), DIR/sys/fs/cgroup (unless --cgroup-root) and the kubelet's and runtimes' files that name pods and containers " +
	"(DIR/var/log/pods, DIR/var/log/containers, DIR/var/lib/docker/containers, DIR/var/lib/containers/storage)"

// applyHostRoot fills in the paths --host-root implies, where the command
// line did not give them. cgroupRoot may be nil for a command without
// --cgroup-root.
func applyHostRoot(cmd *cobra.Command, hostRoot string, procRoot, cgroupRoot *string) error {
	if hostRoot == "" {
		return nil
	}
	if fi, err := os.Stat(hostRoot); err != nil || !fi.IsDir() {
		return fmt.Errorf("--host-root %q is not a directory", hostRoot)
	}
	if !cmd.Flags().Changed("proc") {
		*procRoot = filepath.Join(hostRoot, "proc")
	}
	if cgroupRoot != nil && *cgroupRoot == "" {
		// Absent (the host's /sys not mounted): the cgroup figures are
		// unknown, the names still resolve.
		if dir := filepath.Join(hostRoot, "sys", "fs", "cgroup"); isDir(dir) {
			*cgroupRoot = dir
		}
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
