package cli

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/model"
)

// newDemoCmd is the scripted tour for talks: the live monitor with the
// load generator stepping through the classic context-switch experiments.
func newDemoCmd() *cobra.Command {
	step := durationValue(10 * time.Second)
	var noColor bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "A scripted tour of what context switches cost, for talks",
		Long: `demo opens the live monitor and runs ctxtop's own ping-pong workloads in
turn: idle, futex unpinned, futex on one CPU, futex on two CPUs, futex on
one CPU with a 1 MiB working set per side (the indirect cost), processes over
pipes, a CPU-bound pool of four threads per CPU, goroutines. Each step shows its cost per round trip and the
system-wide switch rate, and the results accumulate in a table.

Keys: n next step, N previous, space holds the current step, q quits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if time.Duration(step) < time.Second {
				return fmt.Errorf("--step must be at least 1s, got %v", step)
			}
			if !isTerminal(os.Stdout) {
				return errors.New("demo needs a terminal")
			}
			if _, ok := os.LookupEnv("NO_COLOR"); ok {
				noColor = true
			}
			o := options{delay: delayValue(time.Second), hot: model.DefaultHotThreshold, procRoot: "/proc", noColor: noColor}
			return runTUI(o, time.Duration(step))
		},
	}
	cmd.Flags().Var(&step, "step", "how long each step runs before the next: seconds or a duration")
	cmd.Flags().BoolVar(&noColor, "no-color", false, "no colours (NO_COLOR is honoured too)")
	return cmd
}
