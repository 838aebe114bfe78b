package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/sampler"
)

// printTaskSource says which path the monitor would read the tasks with
// here: the BPF task walk, or /proc and why not the walk.
func printTaskSource(cmd *cobra.Command) {
	source, note, err := sampler.ProbeSource("")
	switch {
	case err != nil:
		fmt.Fprintln(cmd.OutOrStdout(), "tasks: unknown ("+err.Error()+")")
	case note != "":
		fmt.Fprintf(cmd.OutOrStdout(), "tasks: %s (%s)\n", source, note)
	default:
		fmt.Fprintln(cmd.OutOrStdout(), "tasks: "+source)
	}
}
