package cli

import "github.com/spf13/cobra"

// Placeholder until the load generator lands; replaced wholesale.
func newLoadCmd() *cobra.Command      { return &cobra.Command{Use: "load", Hidden: true} }
func newBenchCmd() *cobra.Command     { return &cobra.Command{Use: "bench", Hidden: true} }
func newLoadChildCmd() *cobra.Command { return &cobra.Command{Use: "__load-child", Hidden: true} }
