package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/report"
)

func newReportCmd() *cobra.Command {
	var ro replayOptions
	var out string
	cmd := &cobra.Command{
		Use:   "report FILE",
		Short: "Write a recording's incident report: one HTML file to open in any browser",
		Long: `report reads a recording (ctxtop record) and writes one self-contained HTML
page about it: a summary of what changed (each spike against the usual level,
and which thread groups and cgroups rose by how much), timelines of switches,
interrupts, IPIs and the run queue with spikes and the baseline marked, the hot
thread groups and threads with their WHY, cgroups with their throttling, and,
when recorded, who wakes whom and where threads blocked and were woken (flame
graphs). It loads nothing from the network: mail it, attach it to a ticket.

Every figure is the one ctxtop replay shows for the same window. --from/--to
narrow the window as in replay. In ctxtop replay, the key R writes the report
of the window the replay shows.`,
		Example: `  ctxtop report incident.ctxrec                    writes incident.html
  ctxtop report incident.ctxrec -o /tmp/incident.html
  ctxtop report incident.ctxrec --from 10:20 --to +5m -o spike.html`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := args[0]
			if out == "" {
				out = strings.TrimSuffix(filepath.Base(path), ".ctxrec") + ".html"
			}
			ps := report.ForReport()
			p, err := openWindow(path, ro, cmd.ErrOrStderr(), ps.Add)
			if err != nil {
				return err
			}
			defer p.Recording().Close()
			n, err := writeReport(ps, p.Recording(), path, out, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			if out != "-" {
				fmt.Fprintf(cmd.ErrOrStderr(), "ctxtop: wrote %s (%s)\n", out, format.Bytes(n))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVarP(&out, "output", "o", "", "the HTML file to write (default: the recording's name with .html, here); - for standard output")
	f.StringVar(&ro.from, "from", "", "start at this time: 15:04, 15:04:05, RFC 3339, or +5m from the recording's start")
	f.StringVar(&ro.to, "to", "", "stop at this time: the same forms, +5m counting from --from")
	return cmd
}

// writeReport writes the report of the window ps was given, of rec, to
// out ("-": stdout). A file is written beside its name and renamed into
// place, so a failure never leaves half a page where a whole one was.
func writeReport(ps *report.Pass, rec *record.Recording, path, out string, stdout io.Writer) (int64, error) {
	r, err := ps.Report(rec, path, version)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if out == "-" {
		return 0, report.WriteHTML(stdout, r)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	if err := report.WriteHTML(tmp, r); err != nil {
		tmp.Close()
		return 0, err
	}
	fi, err := tmp.Stat()
	if err != nil {
		tmp.Close()
		return 0, err
	}
	// A page to share: readable by others, as a file the shell made.
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	return fi.Size(), os.Rename(tmp.Name(), out)
}

// reportFile writes the report of a recording's window from..to (zero:
// open) into the working directory, for the replay's R key:
// incident.ctxrec's window 10:20:00–10:25:00 is
// incident-102000-102500.html. It opens the recording again, so the
// report's pass does not move the replay's own player. It returns what
// it wrote, for the status line.
func reportFile(path string, from, to time.Time) (string, error) {
	ps := report.ForReport()
	p, err := openVisit(path, io.Discard, pipeline.Visit{From: from, To: to, Each: ps.Add})
	if err != nil {
		return "", err
	}
	r := p.Recording()
	defer r.Close()
	p.SetRange(from, to)
	lo, hi := p.Range()
	marks := p.Marks()
	loc := r.Location()
	name := fmt.Sprintf("%s-%s-%s.html", strings.TrimSuffix(filepath.Base(path), ".ctxrec"),
		marks[lo].Time.In(loc).Format("150405"), marks[hi].Time.In(loc).Format("150405"))
	n, err := writeReport(ps, r, path, name, nil)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (%s)", name, format.Bytes(n)), nil
}
