// Package output writes batch reports, one file per format: text like
// pidstat -w -t, to paste into a ticket (text.go), JSON lines, to pipe into
// jq (json.go, jsonrows.go), and collapsed stacks for flame graphs
// (folded.go). formats.go names them for -o; the options they share are
// here.
package output

import "github.com/ctxtop/ctxtop/internal/hostinfo"

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
