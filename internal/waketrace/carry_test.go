package waketrace

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// flushEvery is FLUSH_EVERY in the BPF source: a busy wakee's counts
// reach the pair map at least every this many wake-ups.
const flushEvery = 64

// taskStatus is a field of a thread's /proc status, as text.
func taskStatus(t *testing.T, pid, tid int, field string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in thread %d's status", field, tid)
	return ""
}

// signalAndSettle sends SIGSTOP (or SIGCONT) to pid and, for SIGSTOP,
// waits until the threads tids are stopped, whose counters then stand
// still.
func signalAndSettle(t *testing.T, pid int, tids []int, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatal(err)
	}
	if sig != syscall.SIGSTOP {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n := 0
		for _, tid := range tids {
			if strings.HasPrefix(taskStatus(t, pid, tid, "State"), "T") {
				n++
			}
		}
		if n == len(tids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ping-pong's threads not stopped 10 s after SIGSTOP")
		}
	}
}

// TestCountsOfThreadsThatStopReachTheMap: a busy wakee's counts wait in
// its slot for a while; when it is no longer woken (it stopped, blocked
// for good or exited) the ones left there are never read. Every sleep of
// the ping-pong's threads, from when their tracer's slots were fresh to
// when they stopped, ended in a wake-up, by whichever waker: the counts
// must match their voluntary switches to within what a slot may keep.
// Slots that kept a jiffy's counts lost 200-350 of the two threads'.
func TestCountsOfThreadsThatStopReachTheMap(t *testing.T) {
	pid, tids := testutil.StartPingPong(t)
	// Runs before the workload's own cleanup, which a stopped process
	// would not obey.
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	vol := func() (n uint64) {
		for _, tid := range tids {
			v, err := strconv.ParseUint(taskStatus(t, pid, tid, "voluntary_ctxt_switches"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			n += v
		}
		return n
	}
	for round := range 3 {
		signalAndSettle(t, pid, tids, syscall.SIGSTOP)
		// A tracer of its own: its slots hold nothing from before.
		tr := needTracer(t)
		v0 := vol()
		signalAndSettle(t, pid, tids, syscall.SIGCONT)
		time.Sleep(300 * time.Millisecond)
		signalAndSettle(t, pid, tids, syscall.SIGSTOP)
		v1 := vol()
		var s model.WakeupSample
		if err := tr.Read(&s); err != nil {
			t.Fatal(err)
		}
		tr.Close()
		var woken uint64
		for _, p := range s.Pairs {
			if p.WakeeTID == tids[0] || p.WakeeTID == tids[1] {
				woken += p.Wakeups
			}
		}
		// Stopping is a voluntary switch and SIGCONT's wake-up ends it:
		// the round's first wake-ups end the stop before it, and its last
		// switches start the stop after it, a sleep for a sleep.
		d := int64(woken) - int64(v1-v0)
		t.Logf("round %d: %d voluntary switches, %d wake-ups (%+d)", round, v1-v0, woken, d)
		if v1-v0 < 10_000 {
			t.Fatalf("only %d voluntary switches in 0.3 s of ping-pong", v1-v0)
		}
		// Each slot may keep flushEvery-1; a few switches more or less are
		// the kernel's own (a sleep that a pending signal cut short is a
		// voluntary switch that needs no wake-up).
		const slack = 8
		if d < -2*(flushEvery-1)-slack || d > slack {
			t.Errorf("round %d: %d wake-ups of the ping-pong's threads for %d voluntary switches (%+d), want all but at most %d", round, woken, v1-v0, d, 2*(flushEvery-1)+slack)
		}
	}
}
