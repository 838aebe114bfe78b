package cli

import "github.com/spf13/cobra"

// Placeholder until the demo lands; replaced wholesale.
func newDemoCmd() *cobra.Command { return &cobra.Command{Use: "demo", Hidden: true} }
