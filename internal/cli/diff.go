package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/report"
)

type diffOptions struct {
	from, to   string
	fromA, toA string
	fromB, toB string
	output     string
	top        int
}

func newDiffCmd() *cobra.Command {
	o := diffOptions{output: "text"}
	cmd := &cobra.Command{
		Use:   "diff A.ctxrec B.ctxrec",
		Short: "Compare two recordings (before and after a change) per thread group and cgroup",
		Long: `diff compares a window of recording A with one of recording B, per thread
group (the threads of one program whose names differ only in digits, the
monitor's g, matched by program and pattern since PIDs differ between runs) and
per cgroup: voluntary and involuntary switches/s, switches per CPU-second, %CPU,
WAIT%, and, where both were recorded with --wakeups, wake-to-run latency and the
cross-CPU share.

Each figure is the median over the window's intervals, with the middle half of
the intervals (25th to 75th percentile) as its spread. B/A is the ratio of the
medians. A difference is stated only where the two middle halves do not
overlap; where they do, the verdict is "no clear difference". Groups seen in
one recording only are listed as such.

--from/--to narrow both windows (as in replay); --from-a/--to-a and
--from-b/--to-b narrow one.`,
		Example: `  ctxtop diff pool64.ctxrec pool8.ctxrec
  ctxtop diff before.ctxrec after.ctxrec --from-a 10:20 --to-a +5m -o json
  ctxtop diff before.ctxrec after.ctxrec -o html > diff.html`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.output {
			case "text", "json", "html":
			default:
				return fmt.Errorf("-o/--output %q: want text, json or html", o.output)
			}
			if o.top < 1 {
				return fmt.Errorf("--top must be 1 or more, got %d", o.top)
			}
			return runDiff(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], args[1], o)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVarP(&o.output, "output", "o", "text", "text, json, or html (one self-contained page)")
	f.StringVar(&o.from, "from", "", "start both windows at this time: 15:04, 15:04:05, RFC 3339, or +5m from each recording's start")
	f.StringVar(&o.to, "to", "", "end both windows at this time: the same forms, +5m counting from --from")
	f.StringVar(&o.fromA, "from-a", "", "start A's window here (overrides --from)")
	f.StringVar(&o.toA, "to-a", "", "end A's window here (overrides --to)")
	f.StringVar(&o.fromB, "from-b", "", "start B's window here (overrides --from)")
	f.StringVar(&o.toB, "to-b", "", "end B's window here (overrides --to)")
	f.IntVar(&o.top, "top", 10, "thread groups and cgroups to compare, busiest first")
	completeValues(cmd, "output", "text", "json", "html")
	return cmd
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}

func runDiff(stdout, stderr io.Writer, pathA, pathB string, o diffOptions) error {
	open := func(path, from, to string) (*report.Pass, *pipeline.Player, error) {
		ps := report.ForDiff()
		p, err := openWindow(path, replayOptions{from: from, to: to}, stderr, ps.Add)
		return ps, p, err
	}
	sa, a, err := open(pathA, or(o.fromA, o.from), or(o.toA, o.to))
	if err != nil {
		return err
	}
	defer a.Recording().Close()
	sb, b, err := open(pathB, or(o.fromB, o.from), or(o.toB, o.to))
	if err != nil {
		return err
	}
	defer b.Recording().Close()
	d, err := report.Compare(sa, sb, a.Recording(), b.Recording(), pathA, pathB, o.top)
	if err != nil {
		return err
	}
	switch o.output {
	case "json":
		return report.WriteJSON(stdout, d)
	case "html":
		return report.WriteDiffHTML(stdout, d, version)
	}
	return report.WriteText(stdout, d)
}
