package waketrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// needTracer returns an open tracer, or skips when this machine cannot run
// one. Under CI (root with BTF) a failure to open is a test failure: the
// real programs must run there.
func needTracer(t *testing.T) *Tracer {
	t.Helper()
	tr, err := Open()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("path: BPF programs could not run under CI: %v", err)
		}
		t.Skipf("path: skipped, no BPF here: %v", err)
	}
	t.Logf("path: real BPF programs on kernel %s", bpfutil.KernelRelease())
	t.Cleanup(func() { tr.Close() })
	return tr
}

// bpfFDs lists this process's descriptors that are BPF programs, maps or
// links, as their /proc/self/fd link targets name them.
func bpfFDs(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, "anon_inode:bpf") {
			out = append(out, target)
		}
	}
	return out
}

// bpfLinks counts this process's BPF link descriptors: one per attached
// program.
func bpfLinks(t *testing.T) int {
	t.Helper()
	n := 0
	for _, f := range bpfFDs(t) {
		if f == "anon_inode:bpf_link" {
			n++
		}
	}
	return n
}

func TestLatencyWindow(t *testing.T) {
	for _, tc := range []struct {
		rate     float64
		interval time.Duration
		want     time.Duration
	}{
		{0, time.Second, 0},
		{latencyBudget, time.Second, 0}, // within the budget: all of it
		{4 * latencyBudget, time.Second, 250 * time.Millisecond},
		{4 * latencyBudget, 2 * time.Second, 500 * time.Millisecond},
		{1000 * latencyBudget, time.Second, minLatencyWindow},
	} {
		if got := latencyWindow(tc.rate, tc.interval); got != tc.want {
			t.Errorf("latencyWindow(%v, %v) = %v, want %v", tc.rate, tc.interval, got, tc.want)
		}
	}
}

// TestCollectorTimesLatenciesPartOfTheInterval: the switch program is
// attached for the latency window and detached at its end, except while
// the per-CPU counters need it.
func TestCollectorTimesLatenciesPartOfTheInterval(t *testing.T) {
	needTracer(t).Close()
	before := bpfLinks(t)
	c := NewCollector()
	defer c.Close()
	window := func(d time.Duration) {
		c.life.Lock()
		defer c.life.Unlock()
		if err := c.timeLatencies(d); err != nil {
			t.Fatal(err)
		}
	}
	c.SetEnabled(true) // the first window: firstLatencyWindow
	if n := bpfLinks(t) - before; n != 2 {
		t.Fatalf("in the first window: %d links, want 2 (waking, switch)", n)
	}
	time.Sleep(firstLatencyWindow + 100*time.Millisecond)
	if n := bpfLinks(t) - before; n != 1 {
		t.Errorf("after the first window: %d links, want 1 (waking)", n)
	}
	window(0) // all of the interval
	time.Sleep(150 * time.Millisecond)
	if n := bpfLinks(t) - before; n != 2 {
		t.Errorf("timing the whole interval: %d links, want 2", n)
	}
	window(30 * time.Millisecond)
	time.Sleep(150 * time.Millisecond)
	if n := bpfLinks(t) - before; n != 1 {
		t.Errorf("after a 30 ms window: %d links, want 1", n)
	}
	// A window replaced before its end lasts its own length: the first
	// one's expiry must not end the second.
	window(100 * time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	window(2 * time.Second)
	time.Sleep(200 * time.Millisecond)
	if n := bpfLinks(t) - before; n != 2 {
		t.Errorf("a 2 s window, past the end of the 100 ms one it replaced: %d links, want 2", n)
	}
	for end := time.Now().Add(10 * time.Second); bpfLinks(t)-before != 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the 2 s window still open after 10 s: %d links, want 1", bpfLinks(t)-before)
		}
	}
	c.WantPerCPU(true)
	c.Apply()
	window(30 * time.Millisecond)
	time.Sleep(150 * time.Millisecond)
	if n := bpfLinks(t) - before; n != 3 {
		t.Errorf("a window ending under the per-CPU counters: %d links, want 3", n)
	}
	c.WantPerCPU(false)
	c.Apply()
	if n := bpfLinks(t) - before; n != 1 {
		t.Errorf("per-CPU counters off outside a window: %d links, want 1", n)
	}
}

func TestCloseReleasesEverything(t *testing.T) {
	before := bpfFDs(t)
	tr := needTracer(t)
	links := func() int { return bpfLinks(t) }
	// The wake-up program alone; the per-CPU counters, which run at every
	// switch, only while asked for.
	if n := links(); n != 1 {
		t.Errorf("open tracer holds %d BPF links, want 1", n)
	}
	if err := tr.SetPerCPU(true); err != nil {
		t.Fatal(err)
	}
	if n := links(); n != 3 {
		t.Errorf("with per-CPU counters: %d BPF links, want 3", n)
	}
	if err := tr.SetPerCPU(false); err != nil {
		t.Fatal(err)
	}
	if n := links(); n != 1 {
		t.Errorf("per-CPU counters off again: %d BPF links, want 1", n)
	}
	if err := tr.SetPerCPU(true); err != nil { // Close detaches them too
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if diff := fmt.Sprint(bpfFDs(t)); diff != fmt.Sprint(before) {
		t.Errorf("BPF descriptors after Close = %s, want those before Open: %v", diff, before)
	}
}

// loadResult is the part of `ctxtop load -o json` the accuracy test needs.
type loadResult struct {
	RoundTrips          uint64  `json:"round_trips"`
	DurationS           float64 `json:"duration_s"`
	SwitchesVoluntary   uint64  `json:"switches_voluntary"`
	SwitchesInvoluntary uint64  `json:"switches_involuntary"`
}

// runLoad runs ctxtop load to the end and returns its summary and the TIDs
// of its threads by name (in the process, or a child it started). Pairs are
// matched by TID: the name a pair carries is the one its first wake-up in
// an interval saw, which may be from before the thread named itself.
func runLoad(t *testing.T, args ...string) (loadResult, map[string]int) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t), append([]string{"load", "-o", "json"}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	// The workload's threads name themselves once its child process has
	// started; beside CPU hogs that took longer than the 300 ms once
	// slept here, and only ctxtop's own threads were found. Look until
	// both sides have named themselves, the load ends, or a deadline far
	// past its one second passes.
	var tids map[string]int
	var err error
	start := time.Now()
	deadline := start.Add(15 * time.Second)
look:
	for {
		tids = loadThreads(cmd.Process.Pid)
		if hasSide(tids, "ping-") && hasSide(tids, "pong-") {
			t.Logf("the load's threads named themselves %v after its start", time.Since(start).Round(time.Millisecond))
			err = <-waited
			t.Logf("the load exited %v after its start", time.Since(start).Round(time.Millisecond))
			break
		}
		select {
		case err = <-waited:
			break look
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			err = <-waited
			break
		}
	}
	if err != nil {
		t.Fatalf("ctxtop load %v: %v\n%s", args, err, errb.String())
	}
	var r loadResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("ctxtop load %v printed %q: %v", args, out.String(), err)
	}
	return r, tids
}

// loadThreads maps the names of a ctxtop load's threads to their TIDs: in
// its process, or a child it started. The workload runs in a child process,
// forked from whichever of ctxtop's threads started it: every thread's
// children are looked at.
func loadThreads(pid int) map[string]int {
	pids := []int{pid}
	kids, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, k := range kids {
		b, err := os.ReadFile(k)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
	}
	tids := map[string]int{}
	for _, pid := range pids {
		dirs, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
		for _, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, "comm"))
			tid, err2 := strconv.Atoi(filepath.Base(d))
			if err == nil && err2 == nil {
				tids[strings.TrimSpace(string(b))] = tid
			}
		}
	}
	return tids
}

func hasSide(tids map[string]int, prefix string) bool {
	for name := range tids {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// direction sums one direction's counts over everything read.
type direction struct {
	wakeups, resolved, cross uint64
	lat                      [model.LatencyBuckets]uint64
}

func pairsOf(s *model.WakeupSample, waker, wakee int) direction {
	var d direction
	{
		for _, p := range s.Pairs {
			if p.WakerTID == waker && p.WakeeTID == wakee {
				d.wakeups += p.Wakeups
				d.resolved += p.Resolved
				d.cross += p.CrossCPU
				for i, n := range p.Latency {
					d.lat[i] += n
				}
			}
		}
	}
	return d
}

// TestAccuracyAgainstLoad runs ctxtop's own ping-pong and checks the pair
// counts against what the load and the kernel counted, on the host as it
// is and beside two busy loops.
//
// Every voluntary switch of a ping-pong thread is a sleep that the other
// side's wake-up ended, so the two directions together must match the
// kernel's voluntary switches, within 2%. Only where the protocol makes each side sleep
// once per round trip (pipes on two CPUs) is each direction one wake-up per
// round trip: pinned to one CPU, the woken side preempts the waker before
// it sleeps, and the hand-off back finds the waker runnable, which needs no
// wake-up (about 0.55 per round trip each way here); futex on two CPUs often
// finds the turn back before it sleeps at all.
func TestAccuracyAgainstLoad(t *testing.T) {
	tr := needTracer(t)
	// Time every interval in full, as the collector does below its budget.
	if err := tr.TimeLatencies(true); err != nil {
		t.Fatal(err)
	}
	cpus, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("quiet", func(t *testing.T) { accuracyCases(t, tr, string(cpus)) })
	t.Run("beside two busy loops", func(t *testing.T) {
		for range 2 {
			hog := exec.Command("sh", "-c", "while :; do :; done")
			if err := hog.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				hog.Process.Kill()
				hog.Wait()
			})
		}
		accuracyCases(t, tr, string(cpus))
	})
}

// accuracyCases is TestAccuracyAgainstLoad's cases; cpus is the online
// CPUs' list.
func accuracyCases(t *testing.T, tr *Tracer, cpus string) {
	for _, tc := range []struct {
		mode, cpus string
		// perTrip: every round trip must be a wake-up each way.
		perTrip        bool
		minCross       float64
		maxCross       float64
		needsTwoCPUsOn bool
	}{
		{"futex", "0", false, 0, 5, false},
		{"pipe", "0", false, 0, 5, false},
		{"futex", "0,1", false, 90, 100, true},
		{"pipe", "0,1", true, 90, 100, true},
	} {
		t.Run(tc.mode+"/cpus="+tc.cpus, func(t *testing.T) {
			if tc.needsTwoCPUsOn && strings.TrimSpace(cpus) == "0" {
				t.Skip("one CPU online")
			}
			// Beside CPU hogs a second of cross-CPU futex ping-pong once
			// made 4 round trips: each wake-up waited its turn behind the
			// hogs. Too few to compare ratios with, so the second is run
			// again, whole, until one makes enough or a deadline passes.
			var s model.WakeupSample
			var res loadResult
			var tids map[string]int
			for deadline := time.Now().Add(30 * time.Second); ; {
				if err := tr.Read(&s); err != nil { // drop what came before
					t.Fatal(err)
				}
				res, tids = runLoad(t, "--mode", tc.mode, "--cpus", tc.cpus, "--duration", "1s")
				if err := tr.Read(&s); err != nil {
					t.Fatal(err)
				}
				if res.RoundTrips >= 100 || time.Now().After(deadline) {
					break
				}
				t.Logf("only %d round trips in %.2f s on a busy machine; running the load again", res.RoundTrips, res.DurationS)
			}
			// Every pair is named; thread 0 is a CPU's idle task, which
			// wakes threads too (timers, interrupts).
			for _, p := range s.Pairs {
				if p.WakerComm == "" || p.WakeeComm == "" || p.WakerTID == 0 && !strings.HasPrefix(p.WakerComm, "swapper/") {
					t.Errorf("pair %d %q → %d %q: unnamed", p.WakerTID, p.WakerComm, p.WakeeTID, p.WakeeComm)
				}
			}
			ping, pong := "ping-"+tc.mode, "pong-"+tc.mode
			if tids[ping] == 0 || tids[pong] == 0 {
				t.Fatalf("no %s and %s threads among %v", ping, pong, tids)
			}
			there := pairsOf(&s, tids[ping], tids[pong])
			back := pairsOf(&s, tids[pong], tids[ping])
			// Anyone's wake-ups of the two: the load's start and stop wake
			// each side from another thread, and in pipe mode the Go
			// runtime's preemption signal wakes a side blocked in read
			// some tens of times a second.
			var woken uint64
			for _, p := range s.Pairs {
				if p.WakeeTID == tids[ping] || p.WakeeTID == tids[pong] {
					woken += p.Wakeups
				}
			}
			t.Logf("%d round trips in %.2f s, %d voluntary switches; %s→%s %d wake-ups (%d cross-CPU, p50 %.1f µs), back %d (%d cross-CPU, p50 %.1f µs)",
				res.RoundTrips, res.DurationS, res.SwitchesVoluntary, ping, pong,
				there.wakeups, there.cross, model.LatencyPercentile(&there.lat, 50)/1e3,
				back.wakeups, back.cross, model.LatencyPercentile(&back.lat, 50)/1e3)
			if res.RoundTrips < 100 {
				t.Fatalf("only %d round trips", res.RoundTrips)
			}
			within := func(what string, got, want uint64, lo, hi float64) {
				r := float64(got) / float64(want)
				t.Logf("%s: %d wake-ups vs %d, ratio %.3f", what, got, want, r)
				if r < lo || r > hi {
					t.Errorf("%s: %d wake-ups, want %d × %.2f–%.2f (ratio %.3f)", what, got, want, lo, hi, r)
				}
			}
			if tc.perTrip {
				// 0.96–0.98 on a quiet machine. On a loaded one a side that
				// was kept off its CPU finds the byte already there and
				// does not sleep, so fewer wake-ups are needed: the bound
				// allows for that, not for a lost count (checked below).
				within(ping+"→"+pong+" vs round trips", there.wakeups, res.RoundTrips, 0.8, 1.1)
				within(pong+"→"+ping+" vs round trips", back.wakeups, res.RoundTrips, 0.8, 1.1)
			}
			// Every sleep some wake-up ended: within 2%, give or take
			// what a wakee's slot still held when its thread exited (at
			// most 63 each) and the sleeps of the threads' start-up
			// before the load's first reading of their counters (moved to
			// their CPU by the migration thread, a Go thread parked until
			// it had work), whose wake-ups are counted and their switches
			// not: 0.998-1.002 here, and +19 of 297 on a host at a load
			// average of 600.
			const slack = 2*63 + 24
			v := res.SwitchesVoluntary
			t.Logf("all wake-ups of the two: %d vs %d voluntary switches (%+d)", woken, v, int64(woken)-int64(v))
			if float64(woken) < 0.98*float64(v)-slack || float64(woken) > 1.02*float64(v)+slack {
				t.Errorf("%d wake-ups of the two threads, want their %d voluntary switches within 2%% and %d", woken, v, slack)
			}
			// Of those the pair's own: here 0.99-1.00 but for a slow pipe
			// run (0.93 at 297 switches, the rest the Go runtime's).
			within("both directions vs voluntary switches", there.wakeups+back.wakeups, res.SwitchesVoluntary, 0.9, 1.02)
			for _, d := range []direction{there, back} {
				if d.wakeups == 0 {
					continue
				}
				var timed uint64
				for _, n := range d.lat {
					timed += n
				}
				if timed == 0 {
					t.Errorf("no wake-up of %d timed", d.wakeups)
				}
				pct := 100 * float64(d.cross) / float64(d.resolved)
				if pct < tc.minCross || pct > tc.maxCross {
					t.Errorf("cross-CPU %.1f%%, want %.0f–%.0f%%", pct, tc.minCross, tc.maxCross)
				}
			}
		})
	}
}

func TestOpenWithoutPrivilegeSaysWhatIsMissing(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root; the cli test TestBatchWakeupsWithoutPrivilege runs ctxtop as nobody")
	}
	err := Check()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "CAP_BPF") {
		t.Errorf("Check as non-root = %v, want ErrUnavailable naming CAP_BPF", err)
	}
}

func TestCollectorAttachesOnlyWhileEnabled(t *testing.T) {
	needTracer(t).Close()
	before := len(bpfFDs(t))
	c := NewCollector()
	defer c.Close()
	if w := c.Snapshot(); w != nil {
		t.Errorf("off collector returned %+v, want nil", w)
	}
	c.SetEnabled(true)
	if n := len(bpfFDs(t)); n <= before {
		t.Errorf("enabled collector holds %d BPF descriptors, had %d before", n, before)
	}
	time.Sleep(50 * time.Millisecond)
	w := c.Snapshot()
	if w == nil || w.Unavailable != "" || w.Interval <= 0 {
		t.Fatalf("first snapshot = %+v, want figures", w)
	}
	if len(w.PerCPU) != 0 {
		t.Errorf("per-CPU rates %+v without asking for them", w.PerCPU)
	}
	// The per-CPU counters start when asked for; their first interval is
	// the one after.
	c.WantPerCPU(true)
	c.Apply()
	if w := c.Snapshot(); w == nil || len(w.PerCPU) != 0 {
		t.Errorf("snapshot right after asking for per-CPU counters = %+v, want none yet", w)
	}
	time.Sleep(50 * time.Millisecond)
	w = c.Snapshot()
	if w == nil || w.Unavailable != "" || len(w.PerCPU) == 0 {
		t.Fatalf("snapshot = %+v, want per-CPU rates", w)
	}
	var switches float64
	for _, c := range w.PerCPU {
		switches += c.SwitchesPerSec
	}
	if switches <= 0 {
		t.Errorf("no context switches counted in %v: %+v", w.Interval, w.PerCPU)
	}
	c.SetEnabled(false)
	if n := len(bpfFDs(t)); n != before {
		t.Errorf("disabled collector left %d BPF descriptors, want %d", n, before)
	}
}

func TestCollectorShowsWhyUnavailable(t *testing.T) {
	c := newCollector(func() (*Tracer, error) {
		return nil, fmt.Errorf("%w: needs root, or CAP_BPF and CAP_PERFMON", ErrUnavailable)
	})
	c.SetEnabled(true)
	w := c.Snapshot()
	if w == nil || w.Unavailable != "wake-ups unavailable: needs root, or CAP_BPF and CAP_PERFMON" {
		t.Errorf("snapshot = %+v, want the reason", w)
	}
	c.SetEnabled(false)
	if c.Err() != nil || c.Snapshot() != nil {
		t.Errorf("after SetEnabled(false): err %v, snapshot %v", c.Err(), c.Snapshot())
	}
}

func TestCommIsSanitized(t *testing.T) {
	var c [16]int8
	for i, b := range []byte("\x1b[2Jpwn\x00junk") {
		c[i] = int8(b)
	}
	if got, want := bpfutil.Comm(&c), "?[2Jpwn"; got != want {
		t.Errorf("comm = %q, want %q", got, want)
	}
}

func TestOpenWithoutBTFSaysWhatIsMissing(t *testing.T) {
	object.Host.BTF = filepath.Join(t.TempDir(), "no-such-btf")
	t.Cleanup(func() { object.Host = bpfutil.Host() })
	before := bpfFDs(t)
	tr, err := Open()
	if tr != nil || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open without BTF = %v, %v; want ErrUnavailable", tr, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "BTF") || !strings.Contains(msg, "CONFIG_DEBUG_INFO_BTF") {
		t.Errorf("message %q: want one line naming BTF and how to get it", msg)
	}
	if got := bpfFDs(t); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("failed Open left BPF descriptors: %v", got)
	}
}

// TestFullPairMapCountsDrops fills a two-entry pair map: the wake-ups of
// the pairs that did not fit are counted, not lost silently.
func TestFullPairMapCountsDrops(t *testing.T) {
	needTracer(t).Close()
	tr, err := open(2)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	testutil.StartPingPong(t) // two pairs of its own, and the host's others
	time.Sleep(300 * time.Millisecond)
	var s model.WakeupSample
	if err := tr.Read(&s); err != nil {
		t.Fatal(err)
	}
	// A pair can slip into room the drain itself frees, so the read may
	// hold a few more than two; what matters is that the rest are counted.
	if s.Dropped == 0 {
		t.Errorf("no wake-ups counted as dropped with the map full (%d pairs read)", len(s.Pairs))
	}
	// Drained, the map has room again, and the drop count only grows.
	before := s.Dropped
	time.Sleep(100 * time.Millisecond)
	if err := tr.Read(&s); err != nil {
		t.Fatal(err)
	}
	if len(s.Pairs) == 0 || s.Dropped < before {
		t.Errorf("second read: %d pairs, dropped %d after %d", len(s.Pairs), s.Dropped, before)
	}
}

// TestStaleNoteIsNotTimed: a thread woken while the switch program was
// detached, and running since (preempted by a spinner on its CPU), must
// not read its whole running time as a wake-to-run latency when the
// program attaches and it is next switched in.
func TestStaleNoteIsNotTimed(t *testing.T) {
	tr := needTracer(t) // the switch program is not attached yet
	cpu := strconv.Itoa(runtime.NumCPU() - 1)
	stop := filepath.Join(t.TempDir(), "stop")
	// Woken at 0.3 s (its sleep child exits), then spinning until stop
	// exists, then a short sleep, whose wake-up flushes its counts.
	spin := exec.Command("taskset", "-c", cpu, "sh", "-c", "sleep 0.3; while [ ! -e "+stop+" ]; do :; done; sleep 0.05")
	rival := exec.Command("taskset", "-c", cpu, "sh", "-c", "while :; do :; done")
	for _, c := range []*exec.Cmd{spin, rival} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		rival.Process.Kill()
		rival.Wait()
		spin.Process.Kill()
		spin.Wait()
	})
	time.Sleep(800 * time.Millisecond)
	if err := tr.TimeLatencies(true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // switched in again many times
	if err := os.WriteFile(stop, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := spin.Wait(); err != nil {
		t.Fatal(err)
	}
	var s model.WakeupSample
	if err := tr.Read(&s); err != nil {
		t.Fatal(err)
	}
	var samples, long uint64
	for _, p := range s.Pairs {
		if p.WakeeTID != spin.Process.Pid {
			continue
		}
		for b, n := range p.Latency {
			samples += n
			if b >= 27 { // 134 ms and over
				long += n
			}
		}
	}
	t.Logf("%d latency samples of the spinner, %d of 134 ms or more", samples, long)
	if long > 0 {
		t.Errorf("%d wake-to-run latencies of 134 ms or more: a stale note was timed", long)
	}
}
