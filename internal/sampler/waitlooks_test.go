package sampler

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/ctxtop/ctxtop/internal/testutil"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/waitreason"
)

// waitWorkload is a process whose threads block on known things: "w-sleep"
// sleeps 200 µs at a time in nanosleep; a pacer does too, then wakes
// "w-futex" (FUTEX_WAIT on a word), "w-pipe" (read on a pipe) and "w-epoll"
// (epoll_wait on an eventfd). Each waiter switches a few thousand times a second, all
// voluntarily, and uses almost no CPU. It prints "ready" and exits when
// stdin closes.
func waitWorkload() {
	var word uint32
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		os.Exit(2)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK)
	if err != nil {
		os.Exit(2)
	}
	ep, err := unix.EpollCreate1(0)
	if err != nil {
		os.Exit(2)
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}); err != nil {
		os.Exit(2)
	}
	started := make(chan struct{})
	thread := func(name string, body func()) {
		go func() {
			runtime.LockOSThread()
			setName(name)
			started <- struct{}{}
			for {
				body()
			}
		}()
		<-started
	}
	thread("w-futex", func() {
		for atomic.LoadUint32(&word) == 0 {
			unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), futexWaitPrivate, 0, 0, 0, 0)
		}
		atomic.StoreUint32(&word, 0)
	})
	thread("w-pipe", func() {
		var b [1]byte
		unix.Read(p[0], b[:])
	})
	thread("w-epoll", func() {
		ev := make([]unix.EpollEvent, 1)
		unix.EpollWait(ep, ev, -1)
		var b [8]byte
		unix.Read(efd, b[:])
	})
	one := []byte{1, 0, 0, 0, 0, 0, 0, 0}
	thread("w-sleep", func() {
		ts := unix.Timespec{Nsec: 200_000}
		unix.Nanosleep(&ts, nil)
	})
	// The pacer is preempted by the threads it wakes, so it is not one
	// whose reason the test checks.
	thread("w-pacer", func() {
		ts := unix.Timespec{Nsec: 200_000}
		unix.Nanosleep(&ts, nil)
		atomic.StoreUint32(&word, 1)
		unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(&word)), futexWakePrivate, 1, 0, 0, 0)
		unix.Write(p[1], one[:1])
		unix.Write(efd, one)
	})
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// FUTEX_WAIT and FUTEX_WAKE with FUTEX_PRIVATE_FLAG (linux/futex.h).
const (
	futexWaitPrivate = 0 | 128
	futexWakePrivate = 1 | 128
)

func setName(s string) {
	b := append([]byte(s), 0)
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}

// startChild runs the test binary as one of the workloads above with env
// set and returns its PID once it says "ready".
func startChild(tb testing.TB, env string, attr *syscall.SysProcAttr) int {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = attr
	cmd.Stderr = os.Stderr
	_, out := testutil.StartWorkload(tb, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		tb.Fatalf("workload %s did not start: %q %v", env, line, err)
	}
	return cmd.Process.Pid
}

// TestWaitLooksOnlyWhileHotBlockingThreads checks the looks are bounded and
// armed only when a thread is hot and blocking.
func TestWaitLooksOnlyWhileHotBlockingThreads(t *testing.T) {
	w := newLooker(-1)
	snap := &model.Snapshot{Interval: time.Second, Threads: []model.ThreadRates{
		{PID: 1, TID: 1, Hot: true, VoluntaryPerSec: 10, InvoluntaryPerSec: 5000}, // preempted
		{PID: 1, TID: 2, VoluntaryPerSec: 10},                                     // not hot
	}}
	w.arm(snap)
	if w.timer != nil || len(w.targets) != 0 {
		t.Errorf("armed for no hot blocking thread: %d targets", len(w.targets))
	}
	for i := range 20 {
		snap.Threads = append(snap.Threads, model.ThreadRates{PID: 2, TID: 100 + i, Hot: true, VoluntaryPerSec: 5000})
	}
	w.arm(snap)
	if len(w.targets) != WaitThreads || w.period != time.Second/(WaitLooks+1) {
		t.Errorf("targets %d period %v, want %d and %v", len(w.targets), w.period, WaitThreads, time.Second/(WaitLooks+1))
	}
	w.collect(nil)
}

// sleepers is a workload of n threads that each sleep 500 µs at a time in
// nanosleep: n hot blocking threads that cost little CPU.
func sleepers(n int) {
	started := make(chan struct{})
	for range n {
		go func() {
			runtime.LockOSThread()
			started <- struct{}{}
			ts := unix.Timespec{Nsec: 500_000}
			for {
				unix.Nanosleep(&ts, nil)
			}
		}()
		<-started
	}
	fmt.Println("ready")
	bufio.NewReader(os.Stdin).ReadString('\n')
	os.Exit(0)
}

// BenchmarkWaitLooks20HotThreads is the wait-reason sampling's own cost:
// with 20 hot blocking threads on the box, one refresh's worth of looks
// (WaitLooks rounds over the WaitThreads hottest), as CPU time of this
// process per refresh.
func BenchmarkWaitLooks20HotThreads(b *testing.B) {
	pid := startChild(b, "CTXTOP_SLEEPERS=20", nil)
	// The hot threads come from the rates of one interval; the looks
	// under test are timed alone, on a looker of their own.
	s, err := New(Config{Root: "/proc", PIDs: []int{pid}, HotThreshold: 200})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var prev, cur model.Sample
	if err := s.Sample(&prev); err != nil {
		b.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := s.Sample(&cur); err != nil {
		b.Fatal(err)
	}
	snap := model.Compute(&prev, &cur, model.Options{HotThreshold: 200})
	w := newLooker(s.rootFD)
	defer w.close()
	hot := 0
	for _, t := range snap.Threads {
		if t.Hot {
			hot++
		}
	}
	if hot < WaitThreads {
		b.Fatalf("%d hot threads, want at least %d", hot, WaitThreads)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for range b.N {
		// Forgotten each time: once settled, a thread is not armed
		// again, and the loop would time nothing.
		clear(w.known)
		w.arm(&snap)
		if len(w.targets) != WaitThreads {
			b.Fatalf("armed %d threads, want %d", len(w.targets), WaitThreads)
		}
		w.timer.Stop()
		w.mu.Lock()
		for range WaitLooks {
			w.lookAll()
		}
		w.mu.Unlock()
		w.collect(nil)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/refresh")
	b.ReportMetric(float64(hot), "hot-threads")
}

// ownSwitches sums the voluntary switches of this process's threads (the
// involuntary ones depend on what else the machine runs).
func ownSwitches(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/status")
		if err != nil {
			continue // gone
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "voluntary_ctxt_switches:" {
				var n int
				fmt.Sscan(f[1], &n)
				sum += n
			}
		}
	}
	return sum
}

// pipeSleeper starts a thread of this process that blocks reading a pipe
// until the test ends, and returns its TID.
func pipeSleeper(t *testing.T) int {
	t.Helper()
	r, wfd, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wfd.Close() })
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		tid <- unix.Gettid()
		var b [1]byte
		syscall.Read(int(r.Fd()), b[:]) // blocks until the test ends
	}()
	return <-tid
}

// procLooker is a looker on the real /proc, closed when the
// test ends.
func procLooker(t *testing.T) *looker {
	t.Helper()
	root, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := newLooker(root)
	t.Cleanup(func() {
		w.close()
		unix.Close(root)
	})
	return w
}

// allLooksTaken waits until the armed interval's WaitLooks looks are
// done. On a busy machine the timer behind them runs late, so a fixed
// sleep of an interval and a bit would collect only some of them.
func allLooksTaken(t *testing.T, w *looker) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.mu.Lock()
		n := w.looks
		w.mu.Unlock()
		if n >= WaitLooks {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d looks taken in 20 s", n, WaitLooks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWaitLooksCostAboutOneSwitch: with one P, as the TUI runs, a
// refresh's worth of looks costs this process about one voluntary switch
// per look
// (the thread parked in the poller wakes and looks); a Go timer cost about
// four (sysmon woke for every timer, and the callback's goroutine moved).
func TestWaitLooksCostAboutOneSwitch(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	target := pipeSleeper(t)
	w := procLooker(t)
	snap := &model.Snapshot{Interval: 2 * time.Second, Threads: []model.ThreadRates{
		{PID: os.Getpid(), TID: target, Hot: true, VoluntaryPerSec: 5000},
	}}
	// One round first, so the timer's own set-up is not counted.
	w.arm(&model.Snapshot{Interval: 110 * time.Millisecond, Threads: snap.Threads})
	time.Sleep(150 * time.Millisecond)
	w.collect(nil)
	// On a busy machine this process switches without any look too (its
	// runtime's threads are preempted and hand off): the same interval
	// with nothing armed, just before, is the baseline taken off. Beside
	// CPU hogs one window's noise (10–50 switches) is as large as the
	// bound, so three rounds are taken and their median judged.
	var costs []int
	var log []string
	for range 3 {
		before := ownSwitches(t)
		time.Sleep(snap.Interval)
		idle := ownSwitches(t) - before
		// The looks before settled the thread (one reason); spread looks
		// again.
		clear(w.known)
		before = ownSwitches(t)
		w.arm(snap)
		time.Sleep(snap.Interval)
		got := ownSwitches(t) - before - idle
		tallies := w.collect(nil)
		if len(tallies) != 1 || tallies[0].Looks != WaitLooks {
			t.Fatalf("tallies %+v, want %d looks at thread %d", tallies, WaitLooks, target)
		}
		costs = append(costs, got)
		log = append(log, fmt.Sprintf("%d over an idle interval's %d", got, idle))
	}
	slices.Sort(costs)
	// The sleep, the reads above and a busy machine cost a few more
	// (13–26 measured on a quiet box, 33 under -race; 74–78 with a Go
	// timer).
	if limit := 4 * WaitLooks; costs[1] > limit {
		t.Errorf("%d looks cost a median %d switches (%s), want at most %d", WaitLooks, costs[1], strings.Join(log, "; "), limit)
	}
	t.Logf("%d looks: %s", WaitLooks, strings.Join(log, "; "))
}

// TestSettledThreadIsLookedAtOnlyAtTheRefresh: a thread whose asleep looks
// all found one reason in one function is then looked at only at the
// refresh, arming no timer, until a look there finds something else; its
// shares are over its last ten asleep looks.
func TestSettledThreadIsLookedAtOnlyAtTheRefresh(t *testing.T) {
	target := pipeSleeper(t)
	key := taskKey{os.Getpid(), target}
	w := procLooker(t)
	hot := []model.ThreadRates{{PID: os.Getpid(), TID: target, Hot: true, VoluntaryPerSec: 5000}}
	snap := &model.Snapshot{Interval: 110 * time.Millisecond, Threads: hot}
	refresh := func() *model.Sample {
		t.Helper()
		cur := &model.Sample{Waits: w.collect(nil)}
		w.lookNow(&model.Snapshot{Threads: slices.Clone(hot)}, cur)
		return cur
	}

	w.arm(snap)
	if len(w.targets) != 1 {
		t.Fatalf("armed %d targets, want the hot thread", len(w.targets))
	}
	allLooksTaken(t, w)
	cur := refresh()
	if len(cur.Waits) != 1 || cur.Waits[0].Looks != WaitLooks || cur.Waits[0].Settled ||
		!slices.Equal(cur.Waits[0].Reasons, []model.ReasonCount{{Reason: "pipe read", N: WaitLooks}}) {
		t.Fatalf("spread looks %+v, want %d looks, all pipe read", cur.Waits, WaitLooks)
	}
	if tw := w.known[key]; tw == nil || tw.settled != settledReason || tw.oneReason() != "pipe read" || tw.wchan == "" {
		t.Fatalf("after %d looks all pipe read: %+v, want settled", WaitLooks, tw)
	}

	// Settled: nothing armed, one look at the refresh.
	for range 3 {
		w.arm(snap)
		if len(w.targets) != 0 {
			t.Fatalf("armed %d targets for a settled thread", len(w.targets))
		}
		time.Sleep(20 * time.Millisecond)
		cur := refresh()
		if len(cur.Waits) != 1 {
			t.Fatalf("refresh tallies %+v, want one", cur.Waits)
		}
		if got := cur.Waits[0]; got.Looks != 1 || !got.Settled || !slices.Equal(got.Reasons, []model.ReasonCount{{Reason: "pipe read", N: WaitLooks}}) || got.Wchan == "" {
			t.Fatalf("refresh look %+v, want one look and the last %d, all pipe read", got, WaitLooks)
		}
	}

	// A look that finds another reason unsettles it, and the shares are
	// over its last ten asleep looks: the nine before and this one.
	tw := w.known[key]
	for i := range tw.window {
		tw.window[i] = "futex wait"
	}
	tw.wchan = "futex_wait_queue"
	cur = &model.Sample{}
	w.lookNow(&model.Snapshot{Threads: slices.Clone(hot)}, cur)
	if tw.settled != unsettled {
		t.Fatal("still settled after a look found another reason")
	}
	want := []model.ReasonCount{{Reason: "futex wait", N: 9}, {Reason: "pipe read", N: 1}}
	if len(cur.Waits) != 1 || !cur.Waits[0].Settled || !slices.Equal(cur.Waits[0].Reasons, want) {
		t.Fatalf("look that disagreed: %+v, want settled shares %v", cur.Waits, want)
	}
	// The next interval spreads ten looks again, and its tally is its
	// own: pipe read only.
	w.arm(snap)
	if len(w.targets) != 1 {
		t.Fatalf("armed %d targets after unsettling, want 1", len(w.targets))
	}
	allLooksTaken(t, w)
	cur = refresh()
	if len(cur.Waits) != 1 || cur.Waits[0].Settled || len(cur.Waits[0].Reasons) != 1 {
		t.Fatalf("spread looks after unsettling: %+v", cur.Waits)
	}

	// A rate that changed more than twofold starts over, and so does
	// cooling down.
	tw = w.known[key]
	tw.settled, tw.volPerSec = settledReason, 1000
	w.arm(snap)
	if len(w.targets) != 1 {
		t.Fatalf("rate 5000/s settled at 1000/s: %d targets", len(w.targets))
	}
	w.collect(nil)
	// Cooled down: its looks are kept, unsettled, for a few refreshes in
	// case it comes back, then forgotten.
	cold := &model.Snapshot{Interval: time.Second, Threads: []model.ThreadRates{{PID: os.Getpid(), TID: target, VoluntaryPerSec: 5}}}
	w.arm(cold)
	if tw := w.known[key]; tw == nil || tw.settled != unsettled || len(tw.window) == 0 {
		t.Errorf("a thread cold for one refresh: %+v, want its looks kept, unsettled", tw)
	}
	for range coldRefreshes {
		w.arm(cold)
	}
	if len(w.known) != 0 {
		t.Errorf("a thread no longer hot for %d refreshes is still known: %v", coldRefreshes+1, w.known)
	}
}

// TestNeverAsleepThreadSettles: a thread that every look finds on a CPU
// (as each side of a ping-pong pinned to one CPU nearly always is) stops
// costing spread looks after two intervals of them, and gets them back once
// a look at the refresh finds it asleep.
func TestNeverAsleepThreadSettles(t *testing.T) {
	spin := exec.Command("sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		spin.Process.Kill()
		spin.Wait()
	}()
	pid := spin.Process.Pid
	key := taskKey{pid, pid}
	w := procLooker(t)
	hot := []model.ThreadRates{{PID: pid, TID: pid, Hot: true, VoluntaryPerSec: 5000}}
	snap := &model.Snapshot{Interval: 110 * time.Millisecond, Threads: hot}
	for i := range 2 {
		w.arm(snap)
		if len(w.targets) != 1 {
			t.Fatalf("interval %d: armed %d targets, want the hot thread", i, len(w.targets))
		}
		allLooksTaken(t, w)
		tallies := w.collect(nil)
		if len(tallies) != 1 || tallies[0].Looks != WaitLooks || len(tallies[0].Reasons) != 0 {
			t.Fatalf("interval %d: %+v, want %d looks finding it running", i, tallies, WaitLooks)
		}
	}
	if tw := w.known[key]; tw == nil || tw.settled != settledRunning {
		t.Fatalf("after %d looks finding it running: %+v, want settled as running", 2*WaitLooks, tw)
	}
	w.arm(snap)
	if len(w.targets) != 0 {
		t.Fatalf("armed %d targets for a thread never found asleep", len(w.targets))
	}
	if err := spin.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// Stopped once the kernel says so: on a busy host the signal waits
	// for the spinner's next turn on a CPU. The state reads 'T' as soon as
	// the spinner sets it, while it is still on its way to schedule(); it
	// is off the run queue only once its wchan names where it sleeps.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		wc, werr := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
		if err == nil && werr == nil && len(bytes.TrimSpace(wc)) > 0 && string(bytes.TrimSpace(wc)) != "0" {
			if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] == 'T' {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the spinner did not stop in 20 s")
		}
	}
	cur := &model.Sample{Waits: w.collect(nil)}
	w.lookNow(&model.Snapshot{Threads: slices.Clone(hot)}, cur)
	if len(cur.Waits) != 1 || len(cur.Waits[0].Reasons) != 1 || cur.Waits[0].Settled {
		t.Fatalf("refresh look at the stopped thread: %+v, want it found asleep", cur.Waits)
	}
	t.Logf("stopped: %+v", cur.Waits[0])
	w.arm(snap)
	if len(w.targets) != 1 {
		t.Errorf("armed %d targets once it was found asleep, want 1", len(w.targets))
	}
	w.collect(nil)
}

// TestReadersAgainstLiveProc: what this kernel writes in a thread's wait
// files, an fd's link, /proc/PID/cgroup and pressure/cpu reads and parses
// as the sampler reads it.
func TestReadersAgainstLiveProc(t *testing.T) {
	w := procLooker(t)
	pid := os.Getpid()
	tg := waitTarget{pid: pid, tid: pid}
	if n, err := w.read(&tg, "wchan"); err != nil {
		t.Errorf("reading own wchan: %v", err)
	} else if _, err := procfs.ParseWchan(w.buf[:n], "wchan"); err != nil {
		t.Errorf("own wchan: %v", err)
	}
	if n, err := w.read(&tg, "syscall"); err != nil {
		t.Errorf("reading own syscall: %v", err)
	} else if _, err := procfs.ParseTaskSyscall(w.buf[:n], "syscall"); err != nil {
		t.Errorf("own syscall: %v", err)
	}
	// A sleeping thread's stack starts in the function it sleeps in, as
	// its wchan names it (root only).
	sleeper := waitTarget{pid: pid, tid: pipeSleeper(t)}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Asleep once its wchan says so: it may not have reached its read.
		if n, err := w.read(&sleeper, "wchan"); err == nil {
			if wc, _ := procfs.ParseWchan(w.buf[:n], "wchan"); len(wc) > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the pipe reader did not go to sleep in 20 s")
		}
	}
	if fn, err := w.stackTop(&sleeper); err == unix.EACCES || err == unix.EPERM {
		t.Logf("kernel stacks not readable here: %v", err)
	} else if err != nil {
		t.Errorf("a sleeping thread's stack: %v", err)
	} else if r := waitreason.Switched(string(fn)); r != "pipe read" {
		t.Errorf("a thread reading a pipe: stack starts in %q, reason %q, want pipe read", fn, r)
	}
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer wr.Close()
	if k := w.fdKind(pid, int(r.Fd())); k != procfs.FDPipe {
		t.Errorf("fdKind of a pipe's read end = %d, want FDPipe", k)
	}

	s := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}})
	n, err := readFileAt(s.rootFD, cstr(nil, strconv.Itoa(pid)+"/cgroup"), &s.buf, procfs.LimitStatus)
	if err != nil {
		t.Fatalf("reading own cgroup: %v", err)
	}
	p, _, err := procfs.ParseProcCgroupPath(s.buf[:n], "cgroup")
	if err != nil {
		t.Fatalf("own cgroup: %v", err)
	}
	want := string(p) // a slice of the buffer the pass reuses
	var smp model.Sample
	mustSample(t, s, &smp)
	for _, c := range smp.Tasks {
		if c.TID == pid && c.Cgroup != want {
			t.Errorf("own cgroup %q, want %q", c.Cgroup, want)
		}
	}
	if _, err := os.ReadFile("/proc/pressure/cpu"); err == nil && !smp.System.HasPSI {
		t.Error("pressure/cpu reads here, yet no PSI in the sample")
	}
}
