// Package cli holds ctxtop's cobra commands; each turns flags into an option
// struct and hands it to the package that does the work.
package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Stamped by the Makefile with -ldflags.
var (
	version = "dev"
	commit  = "unknown"
)

// errSilent marks an error whose message was already printed.
var errSilent = errors.New("")

// Execute runs the command line and exits non-zero with a one-line message on error.
func Execute() {
	cmd := newRootCmd()
	if err := cmd.Execute(); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "ctxtop: "+err.Error())
		}
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "ctxtop",
		Short:         "A top for Linux context switches",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	root.AddCommand(newVersionCmd(), newLoadCmd(), newBenchCmd(), newLoadChildCmd(), newDemoCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "ctxtop %s (commit %s, %s)\n", version, commit, goVersion())
		},
	}
}
