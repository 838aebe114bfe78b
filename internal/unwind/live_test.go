package unwind

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/symbolize"
)

// ledgerC is the C program: a worker waiting on a pthread
// condition variable in ledger_settle, a thread whose signal handler
// blocks (to unwind through the signal frame), and main blocked in read.
const ledgerC = `
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int settled;
static long total;
static int never[2];

__attribute__((noinline)) long ledger_settle(long amount) {
	pthread_mutex_lock(&mu);
	while (!settled)
		pthread_cond_wait(&cv, &mu);
	total += amount;
	pthread_mutex_unlock(&mu);
	return total;
}

__attribute__((noinline)) void *worker(void *arg) {
	long r = ledger_settle((long)arg);
	printf("settled %ld\n", r);
	return NULL;
}

__attribute__((noinline)) void on_signal(int sig) {
	char b;
	if (read(never[0], &b, 1) < 0)
		_exit(sig);
}

__attribute__((noinline)) void *sleeper_loop(void *arg) {
	struct timespec ts = {0, 1000000};
	for (;;)
		nanosleep(&ts, NULL);
	return arg;
}

int main(void) {
	pthread_t w, s;
	if (pipe(never) != 0)
		return 1;
	signal(SIGUSR1, on_signal);
	pthread_create(&w, NULL, worker, (void *)41);
	pthread_setname_np(w, "worker");
	pthread_create(&s, NULL, sleeper_loop, NULL);
	pthread_setname_np(s, "sleeper");
	usleep(20000);
	pthread_kill(s, SIGUSR1);
	puts("ready");
	fflush(stdout);
	char b;
	if (read(0, &b, 1) < 0)
		return 1;
	pthread_mutex_lock(&mu);
	settled = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
	pthread_join(w, NULL);
	return 0;
}
`

// queueCxx waits on a std::condition_variable inside class methods.
const queueCxx = `
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>
#include <pthread.h>
#include <unistd.h>

namespace app {
class WorkQueue {
 public:
  __attribute__((noinline)) int take() {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [this] { return !items_.empty(); });
    int v = items_.front();
    items_.pop_front();
    return v;
  }
  void put(int v) {
    { std::lock_guard<std::mutex> lk(mu_); items_.push_back(v); }
    cv_.notify_one();
  }
 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> items_;
};

class Consumer {
 public:
  explicit Consumer(WorkQueue &q) : q_(q) {}
  __attribute__((noinline)) void run() {
    long sum = 0;
    for (;;) {
      int v = q_.take();
      if (v < 0) break;
      sum += v;
    }
    std::printf("sum %ld\n", sum);
  }
 private:
  WorkQueue &q_;
};
}  // namespace app

int main() {
  app::WorkQueue q;
  app::Consumer c(q);
  std::thread t([&c] { c.run(); });
  pthread_setname_np(t.native_handle(), "worker");
  std::puts("ready");
  std::fflush(stdout);
  char b;
  if (read(0, &b, 1) < 0) return 1;
  q.put(-1);
  t.join();
}
`

// buildProg compiles src with the given compiler and flags.
func buildProg(t testing.TB, name, ext, src string, cmd ...string) string {
	t.Helper()
	if _, err := exec.LookPath(cmd[0]); err != nil {
		t.Fatalf("%s is not installed; the test builds real programs with it: %v", cmd[0], err)
	}
	dir := t.TempDir()
	srcPath := filepath.Join(dir, name+ext)
	if err := os.WriteFile(srcPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	c := exec.Command(cmd[0], append(cmd[1:], "-o", out, srcPath, "-pthread")...)
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, b)
	}
	return out
}

// startProg runs bin until it prints "ready"; closing its stdin ends it.
func startProg(t testing.TB, bin string) int {
	t.Helper()
	c := exec.Command(bin)
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
	})
	_ = stdin
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("%s: first line %q, %v", bin, line, err)
	}
	return c.Process.Pid
}

// threadIn returns the thread of pid named comm once it blocks in system
// call nr.
func threadIn(t testing.TB, pid int, comm string, nr int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range tasks {
			dir := fmt.Sprintf("/proc/%d/task/%s/", pid, e.Name())
			c, _ := os.ReadFile(dir + "comm")
			sc, _ := os.ReadFile(dir + "syscall")
			if strings.TrimSpace(string(c)) == comm && strings.HasPrefix(string(sc), strconv.Itoa(nr)+" ") {
				tid, _ := strconv.Atoi(e.Name())
				return tid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no thread %q of %d blocked in system call %d", comm, pid, nr)
	return 0
}

// capture stops thread tid (PTRACE_SEIZE, PTRACE_INTERRUPT), takes its
// registers and up to max bytes of its stack from the stack pointer up,
// and lets it go: what the BPF capture will take at a switch.
func capture(t testing.TB, pid, tid, max int) (Regs, []byte) {
	t.Helper()
	runtime.LockOSThread() // ptrace requests must come from the tracer thread
	defer runtime.UnlockOSThread()
	if err := unix.PtraceSeize(tid); err != nil {
		t.Fatalf("PTRACE_SEIZE %d: %v", tid, err)
	}
	defer unix.PtraceDetach(tid)
	if err := unix.PtraceInterrupt(tid); err != nil {
		t.Fatalf("PTRACE_INTERRUPT %d: %v", tid, err)
	}
	var ws unix.WaitStatus
	if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != nil || !ws.Stopped() {
		t.Fatalf("wait for %d: %v (status %#x)", tid, err, ws)
	}
	var r unix.PtraceRegs
	if err := unix.PtraceGetRegs(tid, &r); err != nil {
		t.Fatalf("PTRACE_GETREGS %d: %v", tid, err)
	}
	mem, err := os.Open(fmt.Sprintf("/proc/%d/task/%d/mem", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	buf := make([]byte, max)
	n, _ := mem.ReadAt(buf, int64(r.Rsp)) // short at the stack's top end
	if n == 0 {
		t.Fatalf("read of %d's stack at %#x failed", tid, r.Rsp)
	}
	return Regs{IP: r.Rip, SP: r.Rsp, BP: r.Rbp}, buf[:n]
}

// names symbolizes a stack the way the capture will.
func names(t *testing.T, pid int, st Stack) []symbolize.Frame {
	t.Helper()
	s, err := symbolize.New(symbolize.Options{Proc: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	frames, err := s.UserExact(pid, st.PCs, st.Exact)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

func chain(frames []symbolize.Frame) string {
	var b strings.Builder
	for i, f := range frames {
		if i > 0 {
			b.WriteString(" <- ")
		}
		b.WriteString(f.String())
	}
	return b.String()
}

// inOrder reports whether want appear in frames in this order (others may
// sit between), each as a whole function name.
func inOrder(frames []symbolize.Frame, want ...string) bool {
	i := 0
	for _, f := range frames {
		if i < len(want) && f.Function == want[i] {
			i++
		}
	}
	return i == len(want)
}

// bare lists the frames without a name, but for one case: Debian has no
// separate debug file of libstdc++ (libstdc++6-12-dbg is a debug build, not
// a debug file), and the thread entry it calls the lambda from,
// execute_native_thread_routine, is local. Where the debug file is
// installed (Fedora's debuginfo, a debuginfod cache) it must be named.
func bare(t *testing.T, frames []symbolize.Frame) []string {
	var out []string
	for _, f := range frames {
		if f.Function == "" && strings.HasPrefix(f.Object, "libstdc++") && len(f.BuildID) > 2 {
			if _, err := os.Stat("/usr/lib/debug/.build-id/" + f.BuildID[:2] + "/" + f.BuildID[2:] + ".debug"); err != nil {
				t.Logf("%s has no debug file here: %s stays unnamed", f.Object, f)
				continue
			}
		}
		if f.Function == "" {
			out = append(out, f.String())
		}
	}
	return out
}

// minBytes is the smallest stack copy, in steps of 64 bytes, with which
// the walk reaches the same end as with the whole copy.
func minBytes(u *Unwinder, pid int, regs Regs, stack []byte, full Stack) int {
	for n := 64; n < len(stack); n += 64 {
		st := u.Unwind(pid, regs, stack[:n])
		if st.Reason == full.Reason && len(st.PCs) == len(full.PCs) {
			return n
		}
	}
	return len(stack)
}

type liveCase struct {
	name    string
	comm    string
	syscall int
	want    []string // function names, innermost first, in order
	// innermost are acceptable names of the first frame.
	innermost []string
	maxBytes  int // the copy must suffice at this size
}

func checkLive(t *testing.T, bin string, cases []liveCase) {
	t.Helper()
	pid := startProg(t, bin)
	u, err := New(Options{Proc: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tid := threadIn(t, pid, c.comm, c.syscall)
			regs, stack := capture(t, pid, tid, 64<<10)
			full := u.Unwind(pid, regs, stack)
			frames := names(t, pid, full)
			t.Logf("%s: %s (%s, %d by frame pointer)", c.name, chain(frames), full.Why(), full.ByFramePointer)
			for _, f := range frames {
				t.Logf("  %#x %s %s+%#x", f.Addr, f, f.Object, f.ObjectAddr)
			}
			if full.Reason != End {
				t.Errorf("stack ends with %q, want the outermost frame reached", full.Why())
			}
			if len(frames) == 0 || !slicesContains(c.innermost, frames[0].Function) {
				t.Errorf("innermost frame %v, want one of %q", frames[:min(1, len(frames))], c.innermost)
			}
			if !inOrder(frames, c.want...) {
				t.Errorf("chain %s\nwant in order %q", chain(frames), c.want)
			}
			if b := bare(t, frames); len(b) > 0 {
				t.Errorf("frames without a name: %q in %s", b, chain(frames))
			}
			need := minBytes(u, pid, regs, stack, full)
			t.Logf("%s: %d stack bytes needed (of %d below the stack's top)", c.name, need, len(stack))
			if need > c.maxBytes {
				t.Errorf("needs %d bytes of stack, want at most %d", need, c.maxBytes)
			}
			if short := u.Unwind(pid, regs, stack[:min(64, len(stack))]); need > 64 && short.Reason != StackShort {
				t.Errorf("64-byte copy ends with %q, want %q", short.Why(), StackShort)
			}
		})
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

var futexWait = []string{"__futex_abstimed_wait_common", "__futex_abstimed_wait_common64", "pthread_cond_wait"}

func ledgerCases() []liveCase {
	return []liveCase{
		{name: "condvar", comm: "worker", syscall: unix.SYS_FUTEX, innermost: futexWait,
			want: []string{"pthread_cond_wait", "ledger_settle", "worker", "start_thread"}, maxBytes: 512},
		{name: "signal", comm: "sleeper", syscall: unix.SYS_READ, innermost: []string{"read", "__libc_read"},
			want: []string{"on_signal", "__restore_rt", "sleeper_loop", "start_thread"}, maxBytes: 4096},
		{name: "main", comm: "ledger", syscall: unix.SYS_READ, innermost: []string{"read", "__libc_read"},
			want: []string{"main", "__libc_start_main", "_start"}, maxBytes: 4096},
	}
}

// TestLedgerNoFramePointers unwinds the program built as
// distributions build: -O2 without frame pointers, through Debian's libc
// (no frame pointers either).
func TestLedgerNoFramePointers(t *testing.T) {
	bin := buildProg(t, "ledger", ".c", ledgerC, "cc", "-O2", "-g", "-fomit-frame-pointer")
	checkLive(t, bin, ledgerCases())
}

// TestLedgerFramePointers is the same program with frame pointers in its
// own code; libc still has none, so only CFI gets past it.
func TestLedgerFramePointers(t *testing.T) {
	bin := buildProg(t, "ledger", ".c", ledgerC, "cc", "-O2", "-g", "-fno-omit-frame-pointer")
	checkLive(t, bin, ledgerCases())
}

// TestLedgerDebugFrame: the program's own code with .debug_frame only (no
// unwind tables, as some embedded and kernel-style builds), found by the
// scanned index when .eh_frame_hdr (of the C runtime's objects) has none.
func TestLedgerDebugFrame(t *testing.T) {
	bin := buildProg(t, "ledger", ".c", ledgerC, "cc", "-O2", "-g", "-fomit-frame-pointer", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables")
	f, err := os.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := loadCFI(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(obj.dbg.index) == 0 {
		t.Fatalf("%s has no .debug_frame FDEs: the flags did not do what this test needs", bin)
	}
	checkLive(t, bin, ledgerCases()[:1])
}

// TestQueueCxx unwinds a C++ worker through libstdc++'s
// condition_variable::wait into the class methods.
func TestQueueCxx(t *testing.T) {
	bin := buildProg(t, "queue", ".cc", queueCxx, "g++", "-O2")
	checkLive(t, bin, []liveCase{{
		name: "condvar", comm: "worker", syscall: unix.SYS_FUTEX, innermost: futexWait,
		// std::condition_variable::wait tail-calls pthread_cond_wait: no frame.
		want:     []string{"pthread_cond_wait", "app::WorkQueue::take", "app::Consumer::run", "start_thread"},
		maxBytes: 1024,
	}})
}

// mixedC has code without CFI, as JIT code and hand-written assembly are:
// asm_trampoline keeps a frame pointer (the frame-pointer step must get
// past it), asm_garbage points %rbp at two words of data on its stack,
// and asm_nodata points it at a global. Neither of the last two may yield
// an invented frame.
const mixedC = `
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int never[2];
static volatile long counter;

void asm_trampoline(void (*fn)(void));
void asm_garbage(int fd);
void asm_nodata(int fd);
__asm__(
	".text\n"
	".globl asm_trampoline\n.type asm_trampoline,@function\n"
	"asm_trampoline:\n"
	"	push %rbp\n	mov %rsp,%rbp\n	call *%rdi\n	pop %rbp\n	ret\n"
	".size asm_trampoline,.-asm_trampoline\n"
	".globl asm_garbage\n.type asm_garbage,@function\n"
	"asm_garbage:\n"
	"	push %rbp\n	push $0x1234\n	push $0x5678\n	mov %rsp,%rbp\n"
	"	sub $8,%rsp\n	mov %rsp,%rsi\n	mov $1,%edx\n	xor %eax,%eax\n	syscall\n"
	"	add $24,%rsp\n	pop %rbp\n	ret\n"
	".size asm_garbage,.-asm_garbage\n"
	".globl asm_nodata\n.type asm_nodata,@function\n"
	"asm_nodata:\n"
	"	push %rbp\n	lea asm_data(%rip),%rbp\n"
	"	sub $8,%rsp\n	mov %rsp,%rsi\n	mov $1,%edx\n	xor %eax,%eax\n	syscall\n"
	"	add $8,%rsp\n	pop %rbp\n	ret\n"
	".size asm_nodata,.-asm_nodata\n"
	".data\nasm_data: .quad 0, 0\n.text\n");

__attribute__((noinline)) void asm_callee(void) {
	char b;
	if (read(never[0], &b, 1) > 0)
		counter++;
}

__attribute__((noinline)) void *asm_worker(void *arg) {
	asm_trampoline(asm_callee);
	return (void *)counter++;
}

__attribute__((noinline)) void *garbage_worker(void *arg) {
	asm_garbage(never[0]);
	return (void *)counter++;
}

__attribute__((noinline)) void *nodata_worker(void *arg) {
	asm_nodata(never[0]);
	return (void *)counter++;
}

int main(void) {
	pthread_t a, g, n;
	if (pipe(never) != 0)
		return 1;
	pthread_create(&a, NULL, asm_worker, NULL);
	pthread_setname_np(a, "asmwaiter");
	pthread_create(&g, NULL, garbage_worker, NULL);
	pthread_setname_np(g, "garbage");
	pthread_create(&n, NULL, nodata_worker, NULL);
	pthread_setname_np(n, "nodata");
	puts("ready");
	fflush(stdout);
	char b;
	return read(0, &b, 1) < 0;
}
`

// TestMixedMode checks the frame-pointer step where no CFI covers a PC,
// and that it never invents a frame when %rbp holds data.
func TestMixedMode(t *testing.T) {
	bin := buildProg(t, "mixed", ".c", mixedC, "cc", "-O2", "-fomit-frame-pointer")
	pid := startProg(t, bin)
	u, err := New(Options{Proc: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	unwind := func(comm string) (Stack, []symbolize.Frame) {
		tid := threadIn(t, pid, comm, unix.SYS_READ)
		regs, stack := capture(t, pid, tid, 64<<10)
		st := u.Unwind(pid, regs, stack)
		frames := names(t, pid, st)
		t.Logf("%s: %s (%s, %d by frame pointer)", comm, chain(frames), st.Why(), st.ByFramePointer)
		return st, frames
	}

	st, frames := unwind("asmwaiter")
	if want := []string{"asm_callee", "asm_trampoline", "asm_worker", "start_thread"}; !inOrder(frames, want...) || st.Reason != End {
		t.Errorf("asmwaiter: %s (%s), want %q to the end", chain(frames), st.Why(), want)
	}
	if st.ByFramePointer != 1 {
		t.Errorf("asmwaiter: %d frames by frame pointer, want 1 (asm_trampoline's)", st.ByFramePointer)
	}

	st, frames = unwind("garbage")
	if len(st.PCs) != 1 || st.Reason != OutsideMapping || st.Addr != 0x1234 {
		t.Errorf("garbage: %s (%s, addr %#x), want only asm_garbage, ended at 0x1234 outside any mapping", chain(frames), st.Why(), st.Addr)
	}

	st, frames = unwind("nodata")
	if len(st.PCs) != 1 || st.Reason != NoUnwindInfo || st.Object != "mixed" {
		t.Errorf("nodata: %s (%s), want only asm_nodata, ended for no unwind info in mixed", chain(frames), st.Why())
	}
}

// BenchmarkUnwind walks the blocked worker's stack of the ledger program
// (six frames through libc without frame pointers), warm: the rows are
// cached, as they are after the first sample of a thread.
func BenchmarkUnwind(b *testing.B) {
	bin := buildProg(b, "ledger", ".c", ledgerC, "cc", "-O2", "-fomit-frame-pointer")
	pid := startProg(b, bin)
	u, err := New(Options{Proc: "/proc"})
	if err != nil {
		b.Fatal(err)
	}
	tid := threadIn(b, pid, "worker", unix.SYS_FUTEX)
	regs, stack := capture(b, pid, tid, 512)
	if st := u.Unwind(pid, regs, stack); st.Reason != End || len(st.PCs) != 6 {
		b.Fatalf("%d frames, %s", len(st.PCs), st.Why())
	}
	var st Stack
	b.ReportAllocs()
	for b.Loop() {
		u.UnwindInto(&st, pid, regs, stack)
	}
}

// BenchmarkUnwindCold is the first sample of a process: its maps read,
// the CFI of the program and libc loaded, every row computed.
func BenchmarkUnwindCold(b *testing.B) {
	bin := buildProg(b, "ledger", ".c", ledgerC, "cc", "-O2", "-fomit-frame-pointer")
	pid := startProg(b, bin)
	tid := threadIn(b, pid, "worker", unix.SYS_FUTEX)
	regs, stack := capture(b, pid, tid, 512)
	b.ReportAllocs()
	for b.Loop() {
		u, err := New(Options{Proc: "/proc"})
		if err != nil {
			b.Fatal(err)
		}
		if st := u.Unwind(pid, regs, stack); st.Reason != End {
			b.Fatal(st.Why())
		}
	}
}

// TestCacheBounds: with room for two rows and one file's CFI, walks
// through the program and libc evict and reload, and still give the same
// stack.
func TestCacheBounds(t *testing.T) {
	bin := buildProg(t, "ledger", ".c", ledgerC, "cc", "-O2", "-fomit-frame-pointer")
	pid := startProg(t, bin)
	tid := threadIn(t, pid, "worker", unix.SYS_FUTEX)
	regs, stack := capture(t, pid, tid, 4096)
	roomy, err := New(Options{Proc: "/proc"})
	if err != nil {
		t.Fatal(err)
	}
	want := roomy.Unwind(pid, regs, stack)
	tight, err := New(Options{Proc: "/proc", Rows: 2, CacheBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		got := tight.Unwind(pid, regs, stack)
		if fmt.Sprint(got.PCs, got.Reason) != fmt.Sprint(want.PCs, want.Reason) {
			t.Errorf("walk %d with tight caches: %#x (%s), want %#x (%s)", i, got.PCs, got.Why(), want.PCs, want.Why())
		}
		if st := tight.Stats(); st.Rows > 2 || st.Objects > 1 {
			t.Errorf("walk %d: %+v kept, want at most 2 rows and 1 file", i, st)
		}
	}
	if st := roomy.Stats(); st.Rows < len(want.PCs)-1 || st.Objects != 2 {
		t.Errorf("roomy caches hold %+v, want a row per frame and the two files", st)
	}
}
