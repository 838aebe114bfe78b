package tui_test

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// stackShare finds the share (in %) of the first line below title whose
// stack names fn, -1 when none does.
func stackShare(pane, title, fn string) float64 {
	in := false
	for _, l := range strings.Split(pane, "\n") {
		switch {
		case strings.HasPrefix(l, title):
			in = true
		case in && !strings.HasPrefix(l, "  "):
			in = false
		case in && strings.Contains(l, fn):
			f := strings.Fields(l)
			if v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64); err == nil {
				return v
			}
		}
	}
	return -1
}

// TestDetailShowsStacksInTmux opens the detail view of a C program's
// thread that blocks in reader_loop and consumer_wait and checks that
// "blocked at" and "woken from" name them and their wakers' functions with
// the shares the program counted (±10 points), and that the stack programs
// are attached only while the detail view is open: on top of what the table
// view holds, which is the BPF task walk's three descriptors where it runs.
func TestDetailShowsStacksInTmux(t *testing.T) {
	needTmuxAndStacks(t)
	bin := testutil.Binary(t)
	b := testutil.StartBlockers(t)

	x := startTmux(t, "stacks", 100, 30, bin+" -d 0.5 -p "+strconv.Itoa(b.PID))
	x.waitFor("the table", contains("mixed", "TOTAL/s"))
	pid, err := strconv.Atoi(strings.TrimSpace(x.run("display-message", "-p", "-t", "e2e", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	// The table view's own descriptors (the BPF task walk, where it runs)
	// are the baseline: the stack programs come and go on top of them.
	base := bpfFDs(t, pid)
	x.run("send-keys", "-t", "e2e", "/", "mixed", "Enter")
	x.waitFor("the filter", contains("/mixed"))
	x.run("send-keys", "-t", "e2e", "Enter")
	allFour := func(p string) bool {
		return stackShare(p, "blocked at", "reader_loop") > 0 && stackShare(p, "blocked at", "consumer_wait") > 0 &&
			stackShare(p, "woken from", "writer_loop") > 0 && stackShare(p, "woken from", "producer_put") > 0
	}
	first := headerClock(t, x.waitFor("both stacks of each kind", allFour))
	// The shares are over the last five refreshes, and the tracer samples
	// the threads' events: judge them once the header's clock says the
	// window is full (3 s of 0.5 s refreshes), not on the first screen
	// that has a few samples of each.
	p := x.waitFor("a full window of samples", func(p string) bool {
		d := headerClock(t, p).Sub(first)
		if d < 0 {
			d += 24 * time.Hour // past midnight
		}
		return allFour(p) && d >= 3*time.Second
	})
	checkFits(t, p, 100, 30)
	if n := bpfFDs(t, pid); n <= base {
		t.Errorf("detail view shows stacks, yet %d BPF descriptors, as many as the table view's %d", n, base)
	}
	reads, conds := b.Counts()
	r := 100 * float64(reads) / float64(reads+conds)
	for _, c := range []struct {
		title, fn string
		want      float64
	}{
		{"blocked at", "reader_loop", r}, {"blocked at", "consumer_wait", 100 - r},
		{"woken from", "writer_loop", r}, {"woken from", "producer_put", 100 - r},
	} {
		if got := stackShare(p, c.title, c.fn); math.Abs(got-c.want) > 10 {
			t.Errorf("%s %s: %.0f%%, the program counted %.0f%%\n%s", c.title, c.fn, got, c.want, p)
		}
	}
	if !strings.Contains(p, "(driver)") {
		t.Errorf("the waker is not named:\n%s", p)
	}
	x.run("send-keys", "-t", "e2e", "Escape")
	x.waitFor("the table again", func(p string) bool { return !strings.Contains(p, "blocked at") && bpfFDs(t, pid) == base })
}

// headerClock is the time of day the header's first line ends with.
func headerClock(t *testing.T, pane string) time.Time {
	t.Helper()
	line, _, _ := strings.Cut(pane, "\n")
	f := strings.Fields(line)
	for i := len(f) - 1; i >= 0; i-- {
		if c, err := time.Parse("15:04:05", f[i]); err == nil {
			return c
		}
	}
	t.Fatalf("no clock in the header line %q", line)
	return time.Time{}
}

// stackShares sums the shares (in %) of the lines below title whose stack
// names fn.
func stackShares(pane, title, fn string) float64 {
	in := false
	var sum float64
	for _, l := range strings.Split(pane, "\n") {
		switch {
		case strings.HasPrefix(l, title):
			in = true
		case in && !strings.HasPrefix(l, "  "):
			in = false
		case in && strings.Contains(l, fn):
			if v, err := strconv.ParseFloat(strings.TrimSuffix(strings.Fields(l)[0], "%"), 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

// stackSamples is the sample count the title line of a stack list gives
// ("blocked at  612 samples"), 0 when none does.
func stackSamples(pane, title string) float64 {
	for _, l := range strings.Split(pane, "\n") {
		if rest, ok := strings.CutPrefix(l, title+"  "); ok {
			if f := strings.Fields(rest); len(f) == 2 && strings.HasPrefix(f[1], "sample") {
				if n, err := strconv.ParseFloat(strings.ReplaceAll(f[0], ",", ""), 64); err == nil {
					return n
				}
			}
		}
	}
	return 0
}

// stackLines counts the lines below title whose stack names fn.
func stackLines(pane, title, fn string) int {
	in, n := false, 0
	for _, l := range strings.Split(pane, "\n") {
		switch {
		case strings.HasPrefix(l, title):
			in = true
		case in && !strings.HasPrefix(l, "  "):
			in = false
		case in && strings.Contains(l, fn):
			n++
		}
	}
	return n
}

// TestDetailShowsGoStacksInTmux opens the detail view of a Go program's
// worker thread, whose goroutine is locked to it and waits for
// sync.Mutexes in main.(*ledger).transfer and main.(*ledger).audit, and
// checks that "blocked at" names both functions, though the thread blocks
// in the Go scheduler (the tracer follows the parked goroutine), with
// transfer's part of the two as the program counted its waits.
//
// audit's waits are a few percent of a worker's blocking switches, one or
// two samples of a window of one thread, so the comparison is over the
// samples of many windows apart (the view's window is five refreshes, 2.5 s
// here), each share weighed by its window's sample count, which the title
// gives: at least six windows and 150 samples in transfer or audit, every
// window that names transfer taken, whether audit made its top three or
// not. The bound is ±10 points, widened by what the screen cannot say: the
// shares are rounded to whole percents, and the samples' own binomial
// error (three standard errors).
func TestDetailShowsGoStacksInTmux(t *testing.T) {
	needTmuxAndStacks(t)
	bin := testutil.Binary(t)
	g := testutil.StartGoMutex(t)

	// Tall enough for the wakers' lists and the three "blocked at" lines.
	x := startTmux(t, "gostacks", 100, 45, bin+" -d 0.5 -p "+strconv.Itoa(g.PID))
	x.waitFor("the table", contains("worker", "TOTAL/s"))
	x.run("send-keys", "-t", "e2e", "/", "worker", "Enter")
	x.waitFor("the filter", contains("/worker"))
	x.run("send-keys", "-t", "e2e", "Enter")
	const tr, au = "main.(*ledger).transfer", "main.(*ledger).audit"
	const minWindows, minSamples, apart = 6, 150, 2500 * time.Millisecond
	var last time.Time
	var p string
	// st and sa are the samples in transfer and audit; rt and ra how far
	// the shares' rounding may have moved them.
	var st, sa, rt, ra float64
	taken, named := 0, false
	for deadline := time.Now().Add(120 * time.Second); taken < minWindows || st+sa < minSamples || !named; {
		p = x.pane()
		n := stackSamples(p, "blocked at")
		if strings.Contains(p, "worker  of process") && stackShares(p, "blocked at", tr) > 0 && n > 0 {
			if c := headerClock(t, p); last.IsZero() || c.Sub(last) >= apart || c.Before(last) {
				last = c
				taken++
				st += stackShares(p, "blocked at", tr) / 100 * n
				sa += stackShares(p, "blocked at", au) / 100 * n
				rt += float64(stackLines(p, "blocked at", tr)) * 0.005 * n
				ra += float64(stackLines(p, "blocked at", au)) * 0.005 * n
				named = named || stackShares(p, "blocked at", au) > 0
				checkFits(t, p, 100, 45)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d windows in which a worker's \"blocked at\" names %s, %.0f samples in transfer, %.0f in audit; the pane shows:\n%s", taken, tr, st, sa, p)
		}
		time.Sleep(100 * time.Millisecond)
	}
	transfer, audit := g.Waits()
	want := 100 * float64(transfer) / float64(transfer+audit)
	got := 100 * st / (st + sa)
	lo := 100 * max(st-rt, 0) / (max(st-rt, 0) + sa + ra)
	hi := 100 * (st + rt) / (st + rt + max(sa-ra, 0))
	q := want / 100
	se := 100 * math.Sqrt(q*(1-q)/(st+sa))
	if want < lo-10-3*se || want > hi+10+3*se {
		t.Errorf("transfer's part of the blocked-at samples in transfer or audit over %d windows: %.0f%% (%.0f%% to %.0f%% as rounded; ±%.1f sampling error), the program counted %.0f%%\nthe last:\n%s",
			taken, got, lo, hi, 3*se, want, p)
	}
	t.Logf("program: transfer=%d audit=%d waits (%.0f%% transfer); detail view over %d windows: %.0f samples in transfer, %.0f in audit: %.0f%% (%.0f%% to %.0f%% as rounded, ±%.1f sampling)",
		transfer, audit, want, taken, st, sa, got, lo, hi, 3*se)
}
