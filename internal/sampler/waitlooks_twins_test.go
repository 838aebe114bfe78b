package sampler

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// spinner is a process that never sleeps, killed when the test ends: every
// look finds it on a CPU or waiting for one.
func spinner(t *testing.T) int {
	t.Helper()
	spin := exec.Command("sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		spin.Process.Kill()
		spin.Wait()
	})
	return spin.Process.Pid
}

// TestUnluckyIntervalKeepsTheReason: each side of a busy ping-pong is
// asleep in only a few looks of ten, so an interval whose looks all found
// one side on a CPU is common. Its tally must carry that side's last asleep
// looks, as a settled thread's does, or the WHY column falls back to
// "blocking, wait N%" for it while its twin says "blocking: pipe 100%". A
// rate that swings twofold (a busy host) must not forget them either.
func TestUnluckyIntervalKeepsTheReason(t *testing.T) {
	pid := spinner(t)
	key := taskKey{pid, pid}
	w := procLooker(t)
	hot := []model.ThreadRates{{PID: pid, TID: pid, Hot: true, VoluntaryPerSec: 5000}}
	snap := &model.Snapshot{Interval: 110 * time.Millisecond, Threads: hot}
	want := []model.ReasonCount{{Reason: "pipe read", N: 3}}

	for _, tc := range []struct {
		name string
		tw   threadWaits
	}{
		{"unsettled", threadWaits{window: []string{"pipe read", "pipe read", "pipe read"}, wchan: "pipe_read"}},
		// Settled at a fifth of today's rate: armed again, spread looks.
		{"rate changed", threadWaits{window: []string{"pipe read", "pipe read", "pipe read"}, wchan: "pipe_read", settled: settledReason, volPerSec: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw := tc.tw
			w.known = map[taskKey]*threadWaits{key: &tw}
			w.arm(snap)
			if len(w.targets) != 1 {
				t.Fatalf("armed %d targets, want the hot thread", len(w.targets))
			}
			allLooksTaken(t, w)
			tallies := w.collect(nil)
			if len(tallies) != 1 || tallies[0].Looks != WaitLooks {
				t.Fatalf("tallies %+v, want one of %d looks", tallies, WaitLooks)
			}
			if diff := cmp.Diff(want, tallies[0].Reasons); diff != "" {
				t.Errorf("reasons after an interval that never found it asleep (-want +got):\n%s", diff)
			}
			if tallies[0].Wchan != "pipe_read" {
				t.Errorf("wchan %q, want the last asleep look's", tallies[0].Wchan)
			}
		})
	}

	// The refresh's looks, at a thread settled as running with asleep
	// looks before, say the same.
	w.known = map[taskKey]*threadWaits{key: {window: []string{"pipe read", "pipe read", "pipe read"}, settled: settledRunning, volPerSec: 5000}}
	cur := &model.Sample{}
	w.lookNow(&model.Snapshot{Threads: slices.Clone(hot)}, cur)
	if len(cur.Waits) != 1 {
		t.Fatalf("refresh tallies %+v, want one", cur.Waits)
	}
	if diff := cmp.Diff(want, cur.Waits[0].Reasons); diff != "" {
		t.Errorf("refresh look at a thread settled as running (-want +got):\n%s", diff)
	}
}

// wokenWaiter is a process with one thread, "w-woken", that waits in
// FUTEX_WAIT with a timeout of 20 µs, over and over, at nice 19 on cpu,
// which a spinner holds: each timeout makes it runnable, and it then waits
// for that CPU for a millisecond or so, still in the kernel's futex wait
// (about a thousand voluntary switches a second). So nearly every look
// finds it woken and not yet run, as each side of a busy ping-pong beside
// busy loops is most of the time it is off a CPU. It prints "ready TID"
// and exits when stdin closes.
func wokenWaiter(cpu int) {
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		setName("w-woken")
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			os.Exit(2)
		}
		// The default slack of 50 µs would keep it asleep that long.
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, 19); err != nil {
			os.Exit(2)
		}
		tid <- unix.Gettid()
		var word uint32
		// Short, yet long enough to sleep: a timeout that expires
		// before the thread is off the CPU returns without a switch.
		ts := unix.Timespec{Nsec: 20_000}
		for {
			// Raw: the thread keeps its P, so the Go runtime never
			// parks it in a futex of its own between the waits.
			unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), futexWaitPrivate, 0, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
	}()
	fmt.Println("ready", <-tid)
	bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// TestWokenThreadKeepsItsReason: a thread that blocks in futex but is
// almost never asleep at the instant of a look (woken, waiting for its
// CPU, for far longer than it sleeps) must still be counted as waiting on
// futex: the first frame of its kernel stack is still the futex wait.
// wchan reads "0" and syscall "running" for it, so with those alone every
// look found it running, and its WHY fell back to "blocking, wait N%", as
// both sides of the futex load did beside a busy loop.
func TestWokenThreadKeepsItsReason(t *testing.T) {
	if _, err := os.ReadFile("/proc/self/stack"); err != nil {
		t.Skipf("kernel stacks not readable here (%v): looks at a thread not asleep read its syscall file", err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	if set.Count() < 2 {
		t.Skip("needs two CPUs: one for the spinner and the waiter, one for the looks")
	}
	cpu := -1
	for c := range 1024 {
		if set.IsSet(c) {
			cpu = c
		}
	}
	spin := spinner(t)
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(spin, &one); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CTXTOP_WOKEN_WAITER="+strconv.Itoa(cpu))
	cmd.Stderr = os.Stderr
	_, out := testutil.StartWorkload(t, cmd)
	line, err := out.ReadString('\n')
	tidText, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	tid, aerr := strconv.Atoi(tidText)
	if err != nil || !ok || aerr != nil {
		t.Fatalf("woken waiter did not start: %q %v", line, err)
	}
	pid := cmd.Process.Pid

	w := procLooker(t)
	snap := &model.Snapshot{Interval: 110 * time.Millisecond, Threads: []model.ThreadRates{
		{PID: pid, TID: tid, Hot: true, VoluntaryPerSec: 1000}}}
	w.arm(snap)
	if len(w.targets) != 1 {
		t.Fatalf("armed %d targets, want the waiter", len(w.targets))
	}
	allLooksTaken(t, w)
	tallies := w.collect(nil)
	if len(tallies) != 1 {
		t.Fatalf("tallies %+v, want the waiter's", tallies)
	}
	tl := tallies[0]
	t.Logf("%d looks: %+v, wchan %q", tl.Looks, tl.Reasons, tl.Wchan)
	// Most looks find it woken and not yet run (all ten, here): at least
	// half, which a busy host only makes likelier, as the waiter then
	// waits the longer for its CPU.
	if len(tl.Reasons) != 1 || tl.Reasons[0].Reason != "futex wait" || tl.Reasons[0].N < tl.Looks/2 {
		t.Errorf("looks at a thread woken from futex and waiting for a CPU: %d looks, reasons %+v, want futex wait in at least half", tl.Looks, tl.Reasons)
	}
	if !strings.Contains(tl.Wchan, "futex") {
		t.Errorf("wchan %q, want the futex wait function its stack starts in", tl.Wchan)
	}
}
