// Package output writes batch reports, one file per format: text like
// pidstat -w -t, to paste into a ticket (text.go), JSON lines, to pipe into
// jq (json.go, jsonthread.go), and collapsed stacks for flame graphs
// (folded.go). formats.go names them for -o; what they share is here.
package output

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// Options choose the rows of a report.
type Options struct {
	// Top limits rows per report; 0 means all.
	Top int
	// Processes prints one row per process instead of per thread (text),
	// and roots collapsed stacks at the process (folded).
	Processes bool
	// Cgroups prints one row per cgroup (text); wins over Processes.
	Cgroups bool
	// Host, when set, goes into every JSON line as "host".
	Host *hostinfo.Facts
	// HidePID is the procfs's hidepid mode when it hides other users'
	// processes from this user: the text says so once, JSON in every line
	// as "hidepid", and the remainder row is labelled as theirs.
	HidePID string
	// PIDs are the processes the report is limited to (--pid), none for
	// all: JSON then sums their wake-ups among themselves, as the load
	// panel does for the load ("wakeups_within").
	PIDs []int
	// Hot is the --hot threshold, for a format that explains an empty
	// output by it (folded).
	Hot float64
}

// The last row of a text report holds the switches no thread row holds, so
// the rows add up to the system line's cs/s.
const unattributedComm = "(no thread row)"

// unattributedWhy says whose the remainder row's switches are: under
// hidepid, mostly the hidden processes', not born or exited threads'.
func (t *Text) unattributedWhy() string {
	if t.opts.HidePID != "" {
		return model.UnattributedWhyHidden
	}
	return model.UnattributedWhy
}

// clip makes a name safe for one table cell: sanitize.Name replaces what a
// terminal would act on (names arrive sanitized from the sampler; this
// guards any other source), and it is cut to commWidth terminal cells, so a
// wide CJK or emoji character counts two and is never split.
func clip(s string) string {
	return ansi.Truncate(sanitize.Name(s), commWidth, "")
}

// pad left-aligns s in width terminal cells: fmt's %-9s counts bytes, so a
// cell holding "…" came out two columns short, and one holding "数据" two
// columns long.
func pad(s string, width int) string {
	if n := ansi.StringWidth(s); n < width {
		return s + strings.Repeat(" ", width-n)
	}
	return s
}

func hot(isHot bool, why model.Why) string {
	if !isHot {
		return ""
	}
	return why.String()
}

func cpus(t model.ThreadRates) string {
	s := sanitize.Name(t.CPUsAllowed)
	if ansi.StringWidth(s) > 8 {
		s = ansi.Truncate(s, 8, "…")
	}
	if t.Pinned {
		return s + "*"
	}
	return s
}
