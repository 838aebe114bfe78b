package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/load"
)

// completeValues makes the shells (bash, zsh, fish: cobra's completion
// scripts ask the binary) offer words for a flag's value. Each command
// names the same words its flag accepts, so they cannot drift.
func completeValues(cmd *cobra.Command, flag string, words ...string) {
	// Only fails for a flag the command lacks: a programming error the
	// completion test catches.
	_ = cmd.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, w := range words {
			if strings.HasPrefix(w, prefix) {
				out = append(out, w)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// modeNames are every mode `ctxtop load --mode` takes.
func modeNames() []string {
	var names []string
	for _, i := range load.Modes() {
		names = append(names, string(i.Mode))
	}
	return names
}
