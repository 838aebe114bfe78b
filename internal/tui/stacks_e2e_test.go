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

// TestDetailShowsGoStacksInTmux opens the detail view of a Go program's
// worker thread, whose goroutine is locked to it and waits for
// sync.Mutexes in main.(*ledger).transfer and main.(*ledger).audit, and
// checks that "blocked at" names both functions, though the thread blocks
// in the Go scheduler (the tracer follows the parked goroutine), with
// transfer's part of the two, summed over four windows, as the program
// counted its waits (±10 points).
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
	// audit's waits are a few percent of a worker's blocking switches,
	// and one window of one thread holds a handful of its samples: the
	// shares are summed over windows apart (the view's window is five
	// refreshes, 2.5 s here), every one that names transfer, whether
	// audit made its top three or not (taking only those it made would
	// count it too often), until there are four and audit was in one.
	const windows, apart = 4, 2500 * time.Millisecond
	var last time.Time
	var p string
	var st, sa float64
	taken := 0
	for deadline := time.Now().Add(90 * time.Second); taken < windows || sa == 0; {
		p = x.pane()
		if strings.Contains(p, "worker  of process") && stackShares(p, "blocked at", tr) > 0 {
			if c := headerClock(t, p); last.IsZero() || c.Sub(last) >= apart || c.Before(last) {
				last = c
				taken++
				st += stackShares(p, "blocked at", tr)
				sa += stackShares(p, "blocked at", au)
				checkFits(t, p, 100, 45)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d windows in which a worker's \"blocked at\" names %s, audit's share in them %.0f%%; the pane shows:\n%s", taken, tr, sa, p)
		}
		time.Sleep(100 * time.Millisecond)
	}
	transfer, audit := g.Waits()
	want := 100 * float64(transfer) / float64(transfer+audit)
	if got := 100 * st / (st + sa); math.Abs(got-want) > 10 {
		t.Errorf("transfer's part of the blocked-at shares in transfer or audit over %d windows: %.0f%%, the program counted %.0f%%\nthe last:\n%s", taken, got, want, p)
	}
	t.Logf("program: transfer=%d audit=%d waits (%.0f%% transfer); detail view, summed over %d windows: transfer %.0f%%, audit %.0f%%", transfer, audit, want, taken, st, sa)
}
