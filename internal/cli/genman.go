package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newGenManCmd writes the man pages from the commands themselves, so they
// never drift from --help; make install runs it.
func newGenManCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-man DIR",
		Short:  "Write ctxtop.1 and a page per subcommand into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("gen-man: %w", unwrapPath(err))
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{Title: "CTXTOP", Section: "1", Source: "ctxtop " + version, Manual: "ctxtop manual"}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("gen-man: %w", unwrapPath(err))
			}
			return nil
		},
	}
}
