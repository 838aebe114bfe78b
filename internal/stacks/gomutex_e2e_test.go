package stacks_test

import (
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

type goStack struct {
	Frames          []string `json:"frames"`
	Own             string   `json:"own"`
	Share           float64  `json:"share"`
	Count           uint64   `json:"count"`
	NoFramePointers string   `json:"no_frame_pointers"`
}

// plumbing is a Go frame of the runtime or its low-level packages, which
// "own" code must skip.
func plumbing(fn string) bool {
	for _, p := range []string{"runtime.", "runtime/", "internal/", "sync.", "syscall."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// TestGoMutexStacks runs ctxtop --stacks on a Go program whose goroutines,
// each locked to an OS thread, contend for sync.Mutexes in
// main.(*ledger).transfer and main.(*ledger).audit. Go keeps frame
// pointers, so the stacks are deep and carry no frame-pointer note; "own"
// code and WHY never name a runtime or sync frame; and the Unlock in
// transfer that wakes a parked waiter's thread is named as a waker, root
// first through the Mutex's unlock (-o folded, which has every stack of an
// interval: such wakings are a few percent of a thread's, seldom in its
// top three).
//
// Where the waiters' threads block is the runtime's scheduler
// (runtime.stoplockedm, entered through runtime.mcall, which clears the
// frame pointer); the tracer follows the goroutine locked to the thread
// from its saved frame pointer, so blocked_at names transfer and audit as
// own frames, with shares of the two as the program counted its waits
// (±10 points; its sleeps, the other parks, left out), and the folded
// stacks go root first from the goroutine's entry through the parked
// goroutine's frames into the scheduler and the kernel.
//
// The program counts the Locks that found the mutex held, not those that
// parked: a Lock spins a little before it parks, but only some
// microseconds, against the 200 µs each holder keeps the mutex, so nearly
// every counted wait parks, in either function alike.
func TestGoMutexStacks(t *testing.T) {
	needBPF(t)
	bin := testutil.Binary(t)
	g := testutil.StartGoMutex(t)
	pid := strconv.Itoa(g.PID)
	deadline := time.Now().Add(90 * time.Second)
	for {
		transfer0, audit0 := g.Waits()
		var r struct {
			Threads []struct {
				TID    int    `json:"tid"`
				PID    int    `json:"pid"`
				Reason string `json:"reason"`
				Why    struct {
					Own string `json:"own_frame"`
				} `json:"why"`
				BlockedAt []goStack `json:"blocked_at"`
				WokenFrom []goStack `json:"woken_from"`
			} `json:"threads"`
			StacksUnavailable string `json:"stacks_unavailable"`
		}
		last := lastReport(t, bin, &r, "--stacks", "-p", pid, "-d", "0.5", "-n", "6")
		transfer, audit := g.Waits()
		transfer, audit = transfer-transfer0, audit-audit0
		if r.StacksUnavailable != "" {
			t.Fatalf("stacks_unavailable: %s", r.StacksUnavailable)
		}
		var blocked uint64
		ownBlocked := map[string]uint64{}
		for _, th := range r.Threads {
			if th.PID != g.PID {
				continue
			}
			if th.Why.Own != "" && plumbing(th.Why.Own) {
				t.Errorf("WHY names a runtime frame: %q", th.Reason)
			}
			for _, s := range append(slices.Clone(th.BlockedAt), th.WokenFrom...) {
				if s.Own != "" && plumbing(s.Own) {
					t.Errorf("own frame %q is the runtime's: %q", s.Own, s.Frames)
				}
				if s.NoFramePointers != "" {
					t.Errorf("a Go stack says no frame pointers in %s: %q", s.NoFramePointers, s.Frames)
				}
			}
			for _, s := range th.BlockedAt {
				blocked += s.Count
				ownBlocked[s.Own] += s.Count
				// Deep: the scheduler's frames down to its entry.
				if user := slices.IndexFunc(s.Frames, plumbing); user < 0 || len(s.Frames)-user < 4 {
					t.Errorf("a short Go stack: %q", s.Frames)
				}
			}
		}
		if t.Failed() {
			return
		}
		const tr, au = "main.(*ledger).transfer", "main.(*ledger).audit"
		named := ownBlocked[tr] > 0 && ownBlocked[au] > 0
		if (blocked < 200 || transfer+audit < 100 || !named) && time.Now().Before(deadline) {
			t.Logf("%d blocking switches traced, %d waits counted, by own frame %v; again", blocked, transfer+audit, ownBlocked)
			continue
		}
		t.Logf("program: transfer=%d audit=%d waits; blocked_at by own frame (samples): %v", transfer, audit, ownBlocked)
		if !named {
			t.Fatalf("blocked_at does not name both %s and %s as own frames:\n%.3000s", tr, au, last)
		}
		want := float64(transfer) / float64(transfer+audit)
		got := float64(ownBlocked[tr]) / float64(ownBlocked[tr]+ownBlocked[au])
		if math.Abs(got-want) > 0.10 {
			t.Errorf("transfer's share of the blocked samples in transfer or audit = %.3f, program counted %.3f", got, want)
		}
		break
	}

	// Every stack of an interval, not only each thread's top three: the
	// Unlock in transfer wakes a thread in a few percent of the wakings.
	offCPU := false
	for {
		out, err := exec.Command(bin, "-b", "-o", "folded", "-p", pid, "-d", "0.5", "-n", "6").Output()
		if err != nil {
			t.Fatalf("ctxtop -o folded: %v", err)
		}
		var n uint64
		var line string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			sp := strings.LastIndexByte(l, ' ')
			f := strings.Split(l[:max(sp, 0)], ";")
			if sp >= 0 && len(f) > 2 && f[1] == "[off-cpu]" && slices.Contains(f, "runtime.gopark") && slices.Contains(f, "main.(*ledger).transfer") {
				// Root first: the goroutine's entry, its function, where it
				// parked, the scheduler the thread went on in, the kernel.
				offCPU = true
				var at []int
				for _, fn := range []string{"runtime.goexit", "main.(*ledger).transfer", "runtime.gopark", "runtime.mcall", "runtime.futex", "__x64_sys_futex"} {
					at = append(at, slices.Index(f, fn))
				}
				if !slices.IsSorted(at) || at[0] < 0 {
					t.Errorf("parked goroutine's off-CPU stack not root first (positions %v): %q", at, l)
				}
			}
			if sp < 0 || len(f) < 2 || !strings.HasPrefix(f[1], "[woken by ") || !slices.Contains(f, "main.(*ledger).transfer") {
				continue
			}
			c, _ := strconv.ParseUint(l[sp+1:], 10, 64)
			n += c
			line = l
		}
		if (line == "" || !offCPU) && time.Now().Before(deadline) {
			t.Log("no waking from main.(*ledger).transfer, or no parked goroutine in it, traced yet; again")
			continue
		}
		if !offCPU {
			t.Errorf("no off-CPU stack goes through main.(*ledger).transfer to runtime.gopark:\n%.2000s", out)
		}
		if line == "" {
			t.Fatalf("no waker stack names main.(*ledger).transfer:\n%.2000s", out)
		}
		t.Logf("woken from transfer: %d samples in 6 intervals, e.g. %s", n, line)
		// Root first: the program's function, the Mutex's unlock (Unlock
		// itself is inlined; its slow path, internal/sync since Go 1.24,
		// is a frame), then the runtime's futex.
		f := strings.Split(line, ";")
		tr := slices.Index(f, "main.(*ledger).transfer")
		u := slices.IndexFunc(f, func(fn string) bool {
			return strings.Contains(fn, "(*Mutex).unlockSlow") || strings.Contains(fn, "(*Mutex).Unlock")
		})
		if fx := slices.Index(f, "runtime.futex"); !(tr < u && u < fx) {
			t.Errorf("waker stack not root first through the Mutex's unlock: %q", line)
		}
		return
	}
}
