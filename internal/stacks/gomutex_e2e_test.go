package stacks_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// goMutex is the running program of testdata/gomutex: worker goroutines,
// each locked to its OS thread, contending for sync.Mutexes in
// main.(*ledger).transfer and main.(*ledger).audit.
type goMutex struct {
	pid             int
	mu              sync.Mutex
	transfer, audit int64
}

// waits are the Locks that waited, by function, as the program counted.
func (g *goMutex) waits() (transfer, audit int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.transfer, g.audit
}

func startGoMutex(t *testing.T) *goMutex {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gomutex")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/gomutex").CombinedOutput(); err != nil {
		t.Fatalf("building testdata/gomutex: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-workers", "4", "-lock")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	g := &goMutex{pid: cmd.Process.Pid}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var tr, au int64
			if _, err := fmt.Sscanf(sc.Text(), "transfer=%d audit=%d", &tr, &au); err == nil {
				g.mu.Lock()
				g.transfer, g.audit = tr, au
				g.mu.Unlock()
			}
		}
	}()
	return g
}

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
// transfer that wakes a parked waiter's thread is named in woken_from,
// through the Mutex's unlock.
//
// Where the waiters' threads block is the runtime's scheduler
// (runtime.stoplockedm, entered through runtime.mcall, which clears the
// frame pointer), so blocked_at has no frame of the program: that is
// logged, not asserted, until the tracer follows a parked goroutine's
// saved frame pointer.
func TestGoMutexStacks(t *testing.T) {
	needBPF(t)
	bin := testutil.Binary(t)
	g := startGoMutex(t)
	pid := strconv.Itoa(g.pid)
	deadline := time.Now().Add(90 * time.Second)
	for {
		out, err := exec.Command(bin, "-b", "-o", "json", "--stacks", "-p", pid, "-d", "0.5", "-n", "6").Output()
		if err != nil {
			t.Fatalf("ctxtop: %v", err)
		}
		transfer, audit := g.waits()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var r struct {
			Threads []struct {
				TID       int       `json:"tid"`
				PID       int       `json:"pid"`
				Reason    string    `json:"reason"`
				BlockedAt []goStack `json:"blocked_at"`
				WokenFrom []goStack `json:"woken_from"`
			} `json:"threads"`
			StacksUnavailable string `json:"stacks_unavailable"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
			t.Fatalf("last report: %v\n%s", err, lines[len(lines)-1])
		}
		if r.StacksUnavailable != "" {
			t.Fatalf("stacks_unavailable: %s", r.StacksUnavailable)
		}
		var blocked uint64
		var waker *goStack
		ownBlocked := map[string]uint64{}
		for _, th := range r.Threads {
			if th.PID != g.pid {
				continue
			}
			if i := strings.Index(th.Reason, " in "); i >= 0 && plumbing(th.Reason[i+4:]) {
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
			for i, s := range th.WokenFrom {
				if s.Own == "main.(*ledger).transfer" {
					waker = &th.WokenFrom[i]
				}
			}
		}
		if t.Failed() {
			return
		}
		if (blocked < 200 || transfer+audit < 100 || waker == nil) && time.Now().Before(deadline) {
			t.Logf("%d blocking switches traced, %d waits counted, waker in transfer seen: %v; again", blocked, transfer+audit, waker != nil)
			continue
		}
		t.Logf("program: transfer=%d audit=%d waits; blocked_at by own frame (samples): %v", transfer, audit, ownBlocked)
		if waker == nil {
			t.Fatalf("no woken_from stack names main.(*ledger).transfer:\n%s", lines[len(lines)-1])
		}
		t.Logf("woken from transfer: %.3f of a thread's wakings, %q", waker.Share, waker.Frames)
		f := waker.Frames
		// Unlock itself is inlined; its slow path (internal/sync since Go
		// 1.24) is a frame.
		u := slices.IndexFunc(f, func(fn string) bool { return strings.Contains(fn, "(*Mutex).unlockSlow") || strings.Contains(fn, "(*Mutex).Unlock") })
		if tr := slices.Index(f, "main.(*ledger).transfer"); u < 0 || tr < u || slices.Index(f, "runtime.futex") > u {
			t.Errorf("waker stack not innermost first through the Mutex's unlock: %q", f)
		}
		return
	}
}
