package stacks_test

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// voluntary is a thread's voluntary_ctxt_switches.
func voluntary(t *testing.T, pid, tid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(tid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no voluntary_ctxt_switches in %s", b)
	return 0
}

// waitThreadNamed is the TID of pid's thread named comm, waited for up
// to 10 s (a program names its threads once they start).
func waitThreadNamed(t *testing.T, pid int, comm string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if tid := threadsByComm(t, pid)[comm]; tid > 0 {
			return tid
		}
	}
	t.Fatalf("no thread named %s", comm)
	return 0
}

// TestSampledSharesHold runs the collector on the C program with a budget
// small enough that its thread "mixed" is sampled (about one event in 8),
// and checks that the shares of the samples still match the program's own
// counts (±10 points). The program blocks in a fixed rotation (3 reads, 1
// condition wait), which every-Nth sampling would alias.
func TestSampledSharesHold(t *testing.T) {
	needBPF(t)
	b := testutil.StartBlockers(t)
	mixed := waitThreadNamed(t, b.PID, "mixed")
	// The program's rate sets the budget: its three threads are targets
	// (-p), so each gets a third, and mixed one eighth of its events.
	v0, t0 := voluntary(t, b.PID, mixed), time.Now()
	time.Sleep(time.Second)
	rate := float64(voluntary(t, b.PID, mixed)-v0) / time.Since(t0).Seconds()
	if rate < 200 {
		t.Skipf("mixed blocks only %.0f times a second here; too few to sample", rate)
	}
	const refresh, refreshes = 500 * time.Millisecond, 10
	c := stacks.NewCollector(stacks.Options{PIDs: []int{b.PID}, Window: refreshes, Budget: int(3 * rate / 8)})
	w := model.NewStackWindow(model.StackOptions{Window: refreshes, Top: 10})
	c.SetEnabled(true)
	defer c.Close()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	var snap *model.Snapshot
	prev, at := voluntary(t, b.PID, mixed), time.Now()
	var events uint64
	for i := range refreshes + 2 {
		time.Sleep(refresh)
		v, now := voluntary(t, b.PID, mixed), time.Now()
		snap = &model.Snapshot{Interval: now.Sub(at), Threads: []model.ThreadRates{{PID: b.PID, TID: mixed, Comm: "mixed",
			VoluntaryPerSec: float64(v-prev) / now.Sub(at).Seconds()}}}
		stacks.ReadThrough(c, w, snap)
		if i >= 2 { // the first reads had every event (or one in 16) taken
			events += v - prev
		}
		prev, at = v, now
	}
	if snap.Stacks == nil || snap.Stacks.Unavailable != "" {
		t.Fatalf("stacks: %+v", snap.Stacks)
	}
	reads, conds := b.Counts()
	var blocked, woken []jsonStack
	var samples uint64
	for _, s := range snap.Threads[0].BlockedAt {
		blocked = append(blocked, jsonStack{Own: s.Own, Share: s.Share, Count: s.Count})
		samples += s.Count
	}
	for _, s := range snap.Threads[0].WokenFrom {
		woken = append(woken, jsonStack{Own: s.Own, Share: s.Share, Count: s.Count})
	}
	t.Logf("mixed %.0f switches/s; %d blocking switches sampled of %d; program reads=%d conds=%d; blocked_at %+v; woken_from %+v",
		rate, samples, events, reads, conds, blocked, woken)
	if samples < 100 {
		t.Fatalf("only %d samples", samples)
	}
	if samples*3 > events {
		t.Errorf("%d of %d blocking switches sampled: not sampled at about one in 8", samples, events)
	}
	want := float64(reads) / float64(reads+conds)
	for fn, w := range map[string]float64{"reader_loop": want, "consumer_wait": 1 - want} {
		if got := shareOf(blocked, fn); math.Abs(got-w) > 0.10 {
			t.Errorf("blocked_at share in %s = %.3f, program counted %.3f", fn, got, w)
		}
	}
	for fn, w := range map[string]float64{"writer_loop": want, "producer_put": 1 - want} {
		if got := shareOf(woken, fn); math.Abs(got-w) > 0.10 {
			t.Errorf("woken_from share in %s = %.3f, program counted %.3f", fn, got, w)
		}
	}
}
