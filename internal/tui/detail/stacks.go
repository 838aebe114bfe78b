package detail

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/textutil"
)

// shownFrames is how many frames a stack line names.
const shownFrames = 3

// SetStacks gives the stack tracer's state for the "blocked at" and "woken
// from" lists; nil while it is off. The stacks themselves come with the
// thread (ThreadRates.BlockedAt, WokenFrom).
func (m *Model) SetStacks(st *model.Stacks) { m.stacks = st }

// SetNotes gives lines said under the stacks about the thread's process,
// such as what a JVM's Java frames lack.
func (m *Model) SetNotes(notes []string) { m.notes = notes }

// stackLines are where the thread blocks and where its wakers woke it, or
// one line saying why there is nothing to show.
func (m Model) stackLines() []string {
	st, th, t := m.stacks, m.th, m.thread
	var notes []string
	for _, n := range m.notes {
		notes = append(notes, th.Dim.Render(textutil.Truncate(n, m.width)))
	}
	if st == nil {
		if len(notes) > 0 {
			return append([]string{""}, notes...)
		}
		return nil
	}
	if st.Unavailable != "" {
		return append([]string{"", th.Dim.Render(textutil.Truncate("stacks: "+st.Unavailable, m.width))}, notes...)
	}
	lines := []string{""}
	list := func(title, none string, ss []model.StackShare) {
		if len(ss) == 0 {
			lines = append(lines, th.Title.Render(title)+" "+th.Dim.Render(none))
			return
		}
		// How many samples the shares are of: 7% of 600 is a finding,
		// 7% of 14 one sample.
		lines = append(lines, th.Title.Render(title)+th.Dim.Render("  "+samplesText(ss)))
		for _, s := range ss {
			row := "  " + textutil.PadLeft(strconv.Itoa(int(s.Share*100+0.5))+"%", 4) + "  " + StackText(s, shownFrames)
			if s.Waker != "" {
				row += th.Dim.Render("  (" + s.Waker + ")")
			}
			lines = append(lines, textutil.Truncate(row, m.width))
		}
	}
	list("blocked at", "no voluntary switch traced yet", t.BlockedAt)
	list("woken from", "no wake-up by a task traced yet", t.WokenFrom)
	var noFP, cut string
	for _, s := range append(append([]model.StackShare(nil), t.BlockedAt...), t.WokenFrom...) {
		if noFP == "" {
			noFP = s.NoFramePointers
		}
		if cut == "" {
			cut = s.Truncated
		}
	}
	if noFP != "" {
		lines = append(lines, th.Dim.Render(textutil.Truncate("short user stacks: no frame pointers in "+noFP+"? (build with -fno-omit-frame-pointer)", m.width)))
	}
	// An unwound stack that ends early says where and why, so that its
	// outermost frame is not read as the thread's entry point.
	if cut != "" {
		lines = append(lines, th.Dim.Render(textutil.Truncate("stacks cut short: "+cut, m.width)))
	}
	// On a busy host the hooks are attached for a window of each refresh
	// (their call costs every switch on the host): say so, as the counts
	// are of that window.
	if a := st.Attached; a > 0 && a < 0.95 {
		lines = append(lines, th.Dim.Render(textutil.Truncate(fmt.Sprintf("stacks from a window of %d%% of the refresh: on a host this busy the hooks cost every switch", int(a*100+0.5)), m.width)))
	}
	lines = append(lines, notes...)
	if st.KernelHidden {
		lines = append(lines, th.Dim.Render(textutil.Truncate("kernel frames hidden: /proc/kallsyms shows no addresses to this user", m.width)))
	}
	return lines
}

// samplesText is how many of the thread's events were sampled over the
// window the shares ss are of: every share is its count over that total.
func samplesText(ss []model.StackShare) string {
	n := 0.0
	if s := ss[0]; s.Share > 0 {
		n = math.Round(float64(s.Count) / s.Share)
	}
	if n == 1 {
		return "1 sample"
	}
	return format.Thousands(n) + " samples"
}

// StackText is a stack as one line, "pthread_cond_wait ← WorkQueue::take ←
// Worker::run": from the frame just inside the program's own innermost
// frame (the call it blocked in), outward, n frames; a stack with no user
// frames shows its kernel frames.
func StackText(s model.StackShare, n int) string {
	user := s.Frames[min(s.KernelFrames, len(s.Frames)):]
	if len(user) == 0 {
		user = s.Frames
	}
	start := 0
	if s.Own != "" {
		for i, f := range user {
			if f == s.Own {
				start = max(i-1, 0)
				break
			}
		}
	}
	shown := user[start:min(start+n, len(user))]
	return strings.Join(shown, " ← ")
}
