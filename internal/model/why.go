package model

import (
	"fmt"
	"strconv"
	"strings"
)

// WhyKind is what makes a row hot.
type WhyKind uint8

const (
	// NotHot is the zero Why: the row is below the hot threshold.
	NotHot WhyKind = iota
	// Blocking: mostly voluntary switches (locks, I/O, hand-offs).
	Blocking
	// Preempted: mostly involuntary switches (more runnable threads than
	// CPUs, or a throttled cgroup taking the CPU away).
	Preempted
	// Throttled: a cgroup that ran out of CPU quota in many periods.
	Throttled
)

// whyWords are the kinds as every output names them.
var whyWords = [...]string{NotHot: "", Blocking: "blocking", Preempted: "preempted", Throttled: "throttled"}

// String is the kind's word, "" for NotHot.
func (k WhyKind) String() string {
	if int(k) < len(whyWords) {
		return whyWords[k]
	}
	return ""
}

// Why says why a row is hot, as data: each output renders it (String for
// the WHY column and the JSON "reason", a "why" object in JSON) instead of
// taking a sentence apart again.
//
// Its fields are ordered and sized to keep it at 48 bytes: every thread
// row carries one, and ThreadRates rows are copied while sorting.
type Why struct {
	Kind WhyKind
	// HasWait is set when the row's run-queue wait is part of the reason
	// (threads and processes; a cgroup row has no wait figure). Wait is
	// then that wait in whole percent; a process's summed wait may pass 100.
	HasWait bool
	// InThrottled marks a Preempted thread that its throttled cgroup takes
	// off the CPU. Throttled is the cgroup's share of throttled CFS periods
	// in whole percent, for it and for a Throttled cgroup.
	InThrottled bool
	Throttled   uint8
	Wait        float32
	// On is what a hot blocking thread was seen waiting on, in the WHY
	// column's short words ("pipe read" and "pipe write" both "pipe",
	// their shares added), biggest first; nil when it was not looked at.
	On []WaitShare
	// Own is the thread's own frame its main blocking stack is in, when
	// the stack tracer targeted it ("WorkQueue::take"); "" otherwise.
	Own string
}

// Hot reports whether the row is hot at all.
func (w Why) Hot() bool { return w.Kind != NotHot }

// String is the WHY column's text, the same in the TUI, the text and the
// JSON output: "blocking, wait 3%", "blocking: futex 80%, pipe 20% in
// WorkQueue::take", "preempted (cgroup throttled 43%)", "throttled 43%",
// a cgroup's bare "blocking"; "" when not hot. The common forms come from
// tables built once, so a busy host formats no string per row.
func (w Why) String() string {
	switch {
	case w.Kind == NotHot:
		return ""
	case w.Kind == Throttled:
		return throttledReasons[min(w.Throttled, 100)]
	case w.InThrottled:
		return preemptedThrottled[min(w.Throttled, 100)]
	case w.Kind == Blocking && len(w.On) > 0:
		return w.onText()
	}
	s := w.Kind.String()
	if w.HasWait {
		s = waitReason(w.Kind, w.Wait)
	}
	if w.Own != "" && w.Kind == Blocking {
		s += " in " + w.Own
	}
	return s
}

// waitReason is "blocking, wait N%" or "preempted, wait N%".
func waitReason(k WhyKind, wait float32) string {
	i := 0
	if k == Preempted {
		i = 1
	}
	if wait < float32(len(reasons[i])) {
		return reasons[i][int(wait)]
	}
	// Only a process's summed wait goes past the table.
	return fmt.Sprintf("%s, wait %.0f%%", reasonWords[i], wait)
}

// onText lists at most waitShown shares, leaving out those under
// waitMinShare after the first: "blocking: futex 80%, pipe 20%".
func (w Why) onText() string {
	var b strings.Builder
	// One allocation: the words are short ("futex 80%, ").
	b.Grow(len("blocking: ") + waitShown*16 + len(" in ") + len(w.Own))
	b.WriteString("blocking: ")
	for i, s := range w.On {
		if i == waitShown || i > 0 && s.Share < waitMinShare {
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.Reason)
		b.WriteByte(' ')
		b.WriteString(strconv.Itoa(int(s.Share*100 + 0.5)))
		b.WriteByte('%')
	}
	if w.Own != "" {
		b.WriteString(" in ")
		b.WriteString(w.Own)
	}
	return b.String()
}
