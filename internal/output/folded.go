package output

import (
	"bufio"
	"io"
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
type Folded struct {
	w *bufio.Writer
}

// NewFolded returns a writer of collapsed stacks to w.
func NewFolded(w io.Writer) *Folded { return &Folded{w: bufio.NewWriter(w)} }

// Write prints the snapshot's stacks of its interval; none while the
// stack tracer is off or unavailable.
func (f *Folded) Write(s *model.Snapshot) error {
	if s.Stacks == nil {
		return nil
	}
	for _, st := range s.Stacks.Folded {
		for i, fr := range st.Frames {
			if i > 0 {
				f.w.WriteByte(';')
			}
			// A frame may hold spaces (the count is after the last one), not the separator.
			f.w.WriteString(strings.NewReplacer(";", ":", "\n", " ").Replace(fr))
		}
		f.w.WriteByte(' ')
		f.w.WriteString(strconv.FormatUint(st.Count, 10))
		f.w.WriteByte('\n')
	}
	return f.w.Flush()
}
