package sampler_test

// The sampler's tests that judge what a refresh shows (rates, hot threads,
// WHY from the wait looks) take their refreshes through the pipeline's
// live source, the one order every Snapshot is made in. They are an
// external test package, since the pipeline imports the sampler.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/load"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// newMonitor is the live source over cfg, refreshed whenever the test
// asks (no interval, so no wait for one).
func newMonitor(cfg sampler.Config) (*pipeline.Live, error) {
	return pipeline.NewLive(pipeline.LiveConfig{Sampler: cfg})
}

// TestThrottledCgroupAgainstKernel runs four CPU-bound threads in a cgroup
// limited to half a CPU and checks ctxtop's row for it against the group's
// own cpu.stat over the same intervals.
func TestThrottledCgroupAgainstKernel(t *testing.T) {
	cg := sampler.MakeQuotaCgroup(t)
	pid := sampler.StartChild(t, "CTXTOP_SPIN_THREADS=1", nil)
	sampler.Write(t, filepath.Join(cg.Dir, "cgroup.procs"), strconv.Itoa(pid))

	mon, err := newMonitor(sampler.Config{Root: "/proc", PIDs: []int{pid}})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	// The first refresh has the group in one sample only; then two
	// intervals of 1.5 s (15 CFS periods each) are compared.
	time.Sleep(300 * time.Millisecond)
	if _, err := mon.Next(); err != nil {
		t.Fatal(err)
	}
	before := cg.Stat(t)
	throttled := 0
	for i := range 2 {
		time.Sleep(1500 * time.Millisecond)
		snap, err := mon.Next()
		if err != nil {
			t.Fatal(err)
		}
		after := cg.Stat(t)
		own := 100 * float64(after.Throttled-before.Throttled) / float64(after.Periods-before.Periods)
		ownMs := float64(after.ThrottledNs-before.ThrottledNs) / 1e6 / snap.Interval.Seconds()
		before = after
		if checkThrottledSnapshot(t, i, snap, cg.Path, pid, own, ownMs) {
			throttled++
		}
	}
	if throttled == 0 {
		t.Skip("the machine is so busy the spinners never used their half CPU: the group was not throttled; skipped")
	}
}

// checkThrottledSnapshot checks one interval; the hot and reason checks
// need the kernel to have throttled the group, which it reports.
func checkThrottledSnapshot(t *testing.T, i int, snap model.Snapshot, path string, pid int, own, ownMs float64) bool {
	t.Helper()
	var row *model.CgroupRates
	for k := range snap.Cgroups {
		if snap.Cgroups[k].Path == path {
			row = &snap.Cgroups[k]
		}
	}
	if row == nil {
		t.Fatalf("interval %d: no row for %s in %+v", i, path, snap.Cgroups)
	}
	t.Logf("interval %d: ctxtop throttled %.1f%% %.0f ms/s, cpu.stat %.1f%% %.0f ms/s; cgroup CPU %.1f%%, %d threads, %s",
		i, row.ThrottledPercent, row.ThrottledMsPerSec, own, ownMs, row.CPUPercent, row.Threads, row.Why)
	if !row.HasThrottling || math.Abs(row.ThrottledPercent-own) > 10 {
		t.Errorf("interval %d: throttled %.1f%%, cgroup's own cpu.stat says %.1f%%", i, row.ThrottledPercent, own)
	}
	if row.LimitCPUs != 0.5 {
		t.Errorf("interval %d: limit %v CPUs, want 0.5", i, row.LimitCPUs)
	}
	throttled := own >= model.ThrottledHot+10
	if throttled && (!row.Hot || row.Why.Kind != model.Throttled) {
		t.Errorf("interval %d: row hot=%v reason %q, want hot, throttled", i, row.Hot, row.Why)
	}
	// The row is the sum of the process's threads.
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var cpu float64
	var reasons bytes.Buffer
	for _, th := range snap.Threads {
		if th.PID != pid {
			continue
		}
		cpu += th.CPUPercent
		if th.CPUPercent > 5 {
			fmt.Fprintf(&reasons, " %d:%q", th.TID, th.Why)
			if throttled && (!th.Hot || th.Why.Kind != model.Preempted || !th.Why.InThrottled) {
				t.Errorf("interval %d: spinning thread %d hot=%v reason %q, want the throttled reason", i, th.TID, th.Hot, th.Why)
			}
		}
	}
	if row.Processes != 1 || row.Threads != len(tasks) || math.Abs(row.CPUPercent-cpu) > 0.01 {
		t.Errorf("interval %d: row %d processes %d threads %.2f%% CPU; the process has %d threads, %.2f%% CPU",
			i, row.Processes, row.Threads, row.CPUPercent, len(tasks), cpu)
	}
	if row.CPUPercent > 65 {
		t.Errorf("interval %d: threads at %.1f%% CPU in all, over the 50%% quota", i, row.CPUPercent)
	}
	t.Logf("thread reasons:%s", reasons.String())
	return throttled
}

// The cs/s the monitor reports over an interval covers at least the
// switches gopsutil counted inside that interval.
func TestContextSwitchRateAgainstGopsutil(t *testing.T) {
	mon, err := newMonitor(sampler.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mon.Close() })
	ctx := context.Background()
	g0, err := load.MiscWithContext(ctx)
	if err != nil {
		t.Fatalf("gopsutil: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	g1, err := load.MiscWithContext(ctx)
	if err != nil {
		t.Fatalf("gopsutil: %v", err)
	}
	snap, err := mon.Next()
	if err != nil {
		t.Fatal(err)
	}
	ours := snap.System.ContextSwitchesPerSec * snap.Interval.Seconds()
	// Rates are floats over the measured interval: allow a rounding switch.
	if theirs := float64(g1.Ctxt - g0.Ctxt); ours+0.5 < theirs {
		t.Errorf("our interval counts %.1f switches, gopsutil saw %.0f inside it", ours, theirs)
	}
	if ours <= 0 {
		t.Errorf("no switches in %v: %v cs/s", snap.Interval, snap.System.ContextSwitchesPerSec)
	}
}

// TestWaitReasonsOfKnownWorkloads samples threads whose blocking reason is
// known and checks each one's main reason and its share.
func TestWaitReasonsOfKnownWorkloads(t *testing.T) {
	pid := sampler.StartChild(t, "CTXTOP_WAIT_WORKLOAD=1", nil)
	// The pacer wakes each thread 5,000 times a second on a quiet box, a
	// few hundred beside CPU hogs: a low threshold makes them all hot
	// either way, which is all this test needs of them.
	mon, err := newMonitor(sampler.Config{Root: "/proc", PIDs: []int{pid}, HotThreshold: 20})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	var snap model.Snapshot
	// The first refresh finds the hot threads (and looks once); the next
	// two carry the looks spread over their intervals.
	for range 3 {
		time.Sleep(300 * time.Millisecond)
		if snap, err = mon.Next(); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]struct{ reason, why string }{
		"w-futex": {"futex wait", "futex"},
		"w-pipe":  {"pipe read", "pipe"},
		"w-epoll": {"epoll wait", "epoll"},
		"w-sleep": {"sleep", "sleep"},
	}
	seen := map[string]bool{}
	for _, th := range snap.Threads {
		w, ok := want[th.Comm]
		if !ok {
			continue
		}
		seen[th.Comm] = true
		t.Logf("%s %.0f/s: %s; wait_on %v; wchan %s; syscall %s", th.Comm, th.TotalPerSec(), th.Why, th.WaitOn, th.Wchan, th.Syscall)
		if len(th.WaitOn) == 0 {
			t.Errorf("%s: no wait shares (hot %v, %s, %.0f/s)", th.Comm, th.Hot, th.Why, th.TotalPerSec())
			continue
		}
		// On a busy machine a look may land while the thread runs (not
		// counted) or on its way in or out of the call; the known reason
		// must still be most of what it waits on.
		top := th.WaitOn[0]
		if top.Reason != w.reason || top.Share < 0.6 {
			t.Errorf("%s: wait_on %v, want %q first with ≥ 60%%", th.Comm, th.WaitOn, w.reason)
		}
		if th.Why.Kind != model.Blocking || len(th.Why.On) == 0 || th.Why.On[0].Reason != w.why {
			t.Errorf("%s: WHY %q, want blocking on %s first", th.Comm, th.Why, w.why)
		}
		if th.Wchan == "" || th.Syscall == "" || !strings.ContainsAny(th.Syscall[:1], "0123456789") {
			t.Errorf("%s: raw looks missing: wchan %q syscall %q", th.Comm, th.Wchan, th.Syscall)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("thread %s not in the snapshot", name)
		}
	}
}

// TestPingPongSidesSayTheSame: the two sides of a real ping-pong do the
// same work, so once both were found asleep, their WHY must be of one kind
// at every refresh: both "blocking: pipe …", never one of them the bare
// "blocking, wait N%". (On a busy host a side's involuntary switches can
// outnumber its voluntary ones for an interval; "preempted" is then what
// its rates say, and that refresh is not compared.)
func TestPingPongSidesSayTheSame(t *testing.T) {
	pid, tids := testutil.StartPingPong(t)
	mon, err := newMonitor(sampler.Config{Root: "/proc", PIDs: []int{pid}, HotThreshold: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	// sides are the two threads' WHY and whether it names a reason; ok
	// when both are hot and blocking.
	sides := func(snap model.Snapshot) (why [2]string, named [2]bool, ok bool) {
		n := 0
		for _, th := range snap.Threads {
			if i := slices.Index(tids, th.TID); i >= 0 && th.HotBlocking() {
				why[i], named[i] = th.Why.String(), th.Why.Kind == model.Blocking && len(th.Why.On) > 0
				n++
			}
		}
		return why, named, n == 2
	}
	next := func() model.Snapshot {
		t.Helper()
		time.Sleep(250 * time.Millisecond) // the refresh interval, not a wait for a condition
		snap, err := mon.Next()
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	// Until both were found asleep at least once: on a busy box that takes
	// a few intervals.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, named, ok := sides(next()); ok && named[0] && named[1] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ping-pong's sides were not both found asleep in 60 s")
		}
	}
	for i := range 20 {
		why, named, ok := sides(next())
		if !ok {
			continue
		}
		if named[0] != named[1] {
			t.Errorf("refresh %d: pp-ping says %q, pp-pong %q", i, why[0], why[1])
		}
	}
}
