package output

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Folded writes collapsed stacks, one "frame;frame;... count" line per
// stack and interval, root first, as flamegraph.pl and speedscope read
// them: the thread's name, then [off-cpu] for where it blocked or
// [woken by WAKER] for where its waker woke it, then the frames from the
// outermost in. Tools that take this format sum identical lines, so the
// intervals add up.
//
// With Processes, the root frame is the thread's process name instead,
// and the lines that then read alike are summed: one flame per process,
// its threads' stacks together.
type Folded struct {
	w         *bufio.Writer
	processes bool
	lines     map[string]uint64
	keys      []string
	// What the reports held, for Empty.
	wrote, targets bool
	unavailable    string
	// hot is the --hot threshold End explains an empty output by.
	hot float64
}

// NewFolded returns a writer of collapsed stacks to w; processes roots
// them at the process instead of the thread (--processes).
func NewFolded(w io.Writer, processes bool) *Folded {
	return &Folded{w: bufio.NewWriter(w), processes: processes, lines: map[string]uint64{}}
}

// frameEscaper keeps a frame one frame: it may hold spaces (the count is
// after the last one), not the separator or a line break.
var frameEscaper = strings.NewReplacer(";", ":", "\n", " ")

// Write prints the snapshot's stacks of its interval; none while the
// stack tracer is off or unavailable.
func (f *Folded) Write(s *model.Snapshot) error {
	if s.Stacks == nil {
		return nil
	}
	f.unavailable = s.Stacks.Unavailable
	f.targets = f.targets || len(s.Stacks.Targets) > 0
	f.wrote = f.wrote || len(s.Stacks.Folded) > 0
	clear(f.lines)
	f.keys = f.keys[:0]
	var b strings.Builder
	for _, st := range s.Stacks.Folded {
		b.Reset()
		for i, fr := range st.Frames {
			if i > 0 {
				b.WriteByte(';')
			}
			if i == 0 && f.processes && st.Process != "" {
				fr = st.Process
			}
			b.WriteString(frameEscaper.Replace(fr))
		}
		line := b.String()
		if _, seen := f.lines[line]; !seen {
			f.keys = append(f.keys, line)
		}
		f.lines[line] += st.Count
	}
	slices.Sort(f.keys)
	for _, line := range f.keys {
		f.w.WriteString(line)
		f.w.WriteByte(' ')
		f.w.WriteString(strconv.FormatUint(f.lines[line], 10))
		f.w.WriteByte('\n')
	}
	return f.w.Flush()
}

// Empty says why the reports so far held no stack at all, "" when they
// held one: an empty flame graph with no word would look like a host
// where nothing blocked. hot is the --hot threshold the targets are
// picked by when no process was named.
func (f *Folded) Empty(hot float64) string {
	switch {
	case f.wrote:
		return ""
	case f.unavailable != "":
		return "no stacks to fold: " + f.unavailable
	case !f.targets:
		return "no stacks to fold: no thread blocked at " + strconv.FormatFloat(hot, 'f', -1, 64) +
			" switches/s or more (--hot) to be traced; name a process with -p to trace all its threads"
	}
	return "no stacks to fold: the traced threads did not block (switch out) in the reports' intervals"
}

// End is Empty at the --hot threshold of the Options the writer was made
// with.
func (f *Folded) End() string { return f.Empty(f.hot) }
