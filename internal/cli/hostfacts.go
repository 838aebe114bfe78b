package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
)

// printHostFacts follows the version line with the host it runs on, so a
// pasted `ctxtop version` says what the figures were measured on.
func printHostFacts(cmd *cobra.Command, _ []string) {
	if s := hostinfo.Read(context.Background(), "").Summary(time.Now()); s != "" {
		fmt.Fprintln(cmd.OutOrStdout(), "host: "+s)
	}
}
