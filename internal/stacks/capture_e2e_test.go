package stacks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// ledgerPingPong hands a turn between two threads through Debian's libc
// condition variables: settler waits in ledger_settle (one time in four in
// ledger_audit) for a posting and poster signals it from ledger_post,
// then waits for the acknowledgement.
// Built -O2 without frame pointers, the kernel's walk ends in libc.
const ledgerPingPong = `
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t posted_cv = PTHREAD_COND_INITIALIZER, acked_cv = PTHREAD_COND_INITIALIZER;
static int posted, acked;
static long total;

__attribute__((noinline)) long ledger_settle(void) {
	pthread_mutex_lock(&mu);
	while (!posted)
		pthread_cond_wait(&posted_cv, &mu);
	posted = 0;
	acked = 1;
	total++;
	pthread_cond_signal(&acked_cv);
	pthread_mutex_unlock(&mu);
	return total;
}

__attribute__((noinline)) void ledger_post(void) {
	pthread_mutex_lock(&mu);
	posted = 1;
	pthread_cond_signal(&posted_cv);
	while (!acked)
		pthread_cond_wait(&acked_cv, &mu);
	acked = 0;
	pthread_mutex_unlock(&mu);
}

/* Every fourth wait: another function, that the shares tell apart. */
__attribute__((noinline)) long ledger_audit(void) {
	pthread_mutex_lock(&mu);
	while (!posted)
		pthread_cond_wait(&posted_cv, &mu);
	posted = 0;
	acked = 1;
	total += 2;
	pthread_cond_signal(&acked_cv);
	pthread_mutex_unlock(&mu);
	return total;
}

static void *settler(void *arg) {
	for (unsigned i = 0;; i++) {
		if (i % 4 == 3)
			ledger_audit();
		else
			ledger_settle();
	}
	return arg;
}
static void *poster(void *arg) { for (;;) { ledger_post(); usleep(20); } return arg; }

int main(void) {
	pthread_t s, p;
	pthread_create(&s, NULL, settler, NULL);
	pthread_setname_np(s, "settler");
	pthread_create(&p, NULL, poster, NULL);
	pthread_setname_np(p, "poster");
	puts("ready");
	fflush(stdout);
	char b;
	return read(0, &b, 1) < 0;
}
`

// ledgerCxx is the same hand-off in C++ class methods: std::mutex and
// std::condition_variable, -O2, no frame pointers.
const ledgerCxx = `
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <pthread.h>
#include <unistd.h>

namespace app {
class Ledger {
 public:
  __attribute__((noinline)) long settle() {
    std::unique_lock<std::mutex> lk(mu_);
    posted_cv_.wait(lk, [this] { return posted_; });
    posted_ = false;
    acked_ = true;
    acked_cv_.notify_one();
    return ++total_;
  }
  __attribute__((noinline)) void post() {
    std::unique_lock<std::mutex> lk(mu_);
    posted_ = true;
    posted_cv_.notify_one();
    acked_cv_.wait(lk, [this] { return acked_; });
    acked_ = false;
  }
 private:
  std::mutex mu_;
  std::condition_variable posted_cv_, acked_cv_;
  bool posted_ = false, acked_ = false;
  long total_ = 0;
};
}  // namespace app

int main() {
  app::Ledger l;
  std::thread s([&l] { for (;;) l.settle(); });
  pthread_setname_np(s.native_handle(), "settler");
  std::thread p([&l] { for (;;) { l.post(); usleep(20); } });
  pthread_setname_np(p.native_handle(), "poster");
  std::puts("ready");
  std::fflush(stdout);
  char b;
  return read(0, &b, 1) < 0;
}
`

// startBuilt compiles src with cc (flags after it) and starts it, waiting
// for its "ready"; the program's PID.
func startBuilt(t *testing.T, cc, ext, src string, flags ...string) int {
	t.Helper()
	dir := t.TempDir()
	file, bin := filepath.Join(dir, "prog"+ext), filepath.Join(dir, "prog")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, flags...), "-pthread", "-o", bin, file)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
	}
	cmd := exec.Command(bin)
	_, out := testutil.StartWorkload(t, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("program said %q, %v", line, err)
	}
	return cmd.Process.Pid
}

// threadsByComm maps pid's thread names to their TIDs.
func threadsByComm(t *testing.T, pid int) map[string]int {
	t.Helper()
	out := map[string]int{}
	ents, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		c, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", e.Name(), "comm"))
		tid, _ := strconv.Atoi(e.Name())
		out[strings.TrimSpace(string(c))] = tid
	}
	return out
}

// collect runs a collector on process pid (-p) for refreshes of 0.5 s, as
// the pipeline does, and returns the last snapshot's stacks, every stack
// of the window kept (not only the top 3).
func collect(t *testing.T, pid int, opt stacks.Options, refreshes int) *model.Stacks {
	t.Helper()
	opt.PIDs = []int{pid}
	c := stacks.NewCollector(opt)
	w := model.NewStackWindow(model.StackOptions{Window: refreshes, Top: 1000})
	c.SetEnabled(true)
	defer c.Close()
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	tids := threadsByComm(t, pid)
	prev, at := map[int]uint64{}, time.Now()
	for _, tid := range tids {
		prev[tid] = voluntary(t, pid, tid)
	}
	var snap *model.Snapshot
	for range refreshes {
		time.Sleep(500 * time.Millisecond)
		now := time.Now()
		snap = &model.Snapshot{Interval: now.Sub(at)}
		for comm, tid := range tids {
			v := voluntary(t, pid, tid)
			snap.Threads = append(snap.Threads, model.ThreadRates{PID: pid, TID: tid, Comm: comm,
				VoluntaryPerSec: float64(v-prev[tid]) / now.Sub(at).Seconds()})
			prev[tid] = v
		}
		at = now
		stacks.ReadThrough(c, w, snap)
	}
	if snap.Stacks == nil || snap.Stacks.Unavailable != "" {
		t.Fatalf("stacks: %+v", snap.Stacks)
	}
	return snap.Stacks
}

// ownShare is the share of ss whose own frame is own and whose frames
// include every one of with; and the samples in all.
func ownShare(ss []model.StackShare, own string, with ...string) (share float64, samples uint64) {
	for _, s := range ss {
		samples += s.Count
		if s.Own != own {
			continue
		}
		ok := true
		for _, w := range with {
			ok = ok && slicesContains(s.Frames, w)
		}
		if ok {
			share += s.Share
		}
	}
	return share, samples
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// checkNoBareAddress fails on a frame that is only an address: every
// frame is a name, or an object and an offset in it.
func checkNoBareAddress(t *testing.T, what string, ss []model.StackShare) {
	t.Helper()
	for _, s := range ss {
		for _, f := range s.Frames {
			if strings.HasPrefix(f, "0x") {
				t.Errorf("%s: a bare address %s in %q", what, f, s.Frames)
			}
		}
		if strings.HasPrefix(s.Own, "0x") || strings.Contains(s.Own, "+0x") {
			t.Errorf("%s: own frame %q is no function name", what, s.Own)
		}
	}
}

// checkLedger checks that the settler's blocking stacks name ledger_settle
// (or audit, when given: the C program's other wait) and its wakers'
// ledger_post as their own function in at least 90% of the
// sampled events, and that the library calls they block and wake in
// (pthread_cond_wait, pthread_cond_signal) are on their main stacks. (The
// settler also wakes from the mutex, which the poster's pthread_cond_wait
// unlocks: those stacks name ledger_post too.)
func checkLedger(t *testing.T, pid int, settle, audit, post, wait, signal string) {
	t.Helper()
	st := collect(t, pid, stacks.Options{}, 8)
	tid := threadsByComm(t, pid)["settler"]
	th := st.Threads[tid]
	if th == nil {
		t.Fatalf("no stacks of settler (%d): %+v", tid, st.Threads)
	}
	b, nb := ownShare(th.BlockedAt, settle)
	if audit != "" {
		a, _ := ownShare(th.BlockedAt, audit)
		t.Logf("settler blocked in %s %.3f, in %s %.3f", settle, b, audit, a)
		b += a
	}
	w, nw := ownShare(th.WokenFrom, post)
	if bw, _ := ownShare(th.BlockedAt, settle, wait); bw < 0.3 {
		t.Errorf("blocked at %s through %s in only %.3f of the samples", settle, wait, bw)
	}
	if ws, _ := ownShare(th.WokenFrom, post, signal); ws < 0.3 {
		t.Errorf("woken from %s through %s in only %.3f of the samples", post, signal, ws)
	}
	t.Logf("settler: %d blocking samples, %.3f in %s; %d waking samples, %.3f from %s", nb, b, settle, nw, w, post)
	for i, s := range th.BlockedAt[:min(3, len(th.BlockedAt))] {
		t.Logf("blocked at #%d %.3f %q truncated %q", i, s.Share, s.Frames, s.Truncated)
	}
	for i, s := range th.WokenFrom[:min(3, len(th.WokenFrom))] {
		t.Logf("woken from #%d %.3f %q truncated %q", i, s.Share, s.Frames, s.Truncated)
	}
	if nb < 50 || nw < 50 {
		t.Fatalf("only %d blocking and %d waking samples", nb, nw)
	}
	if b < 0.9 {
		t.Errorf("blocked at %s in %.3f of the samples, want >= 0.9", settle, b)
	}
	if w < 0.9 {
		t.Errorf("woken from %s in %.3f of the samples, want >= 0.9", post, w)
	}
	checkNoBareAddress(t, "blocked at", th.BlockedAt)
	checkNoBareAddress(t, "woken from", th.WokenFrom)
}

// TestCaptureUnwindsCThroughLibc: a C program through Debian's libc, with
// and without frame pointers of its own: libc has none either way.
func TestCaptureUnwindsCThroughLibc(t *testing.T) {
	needBPF(t)
	for name, flags := range map[string][]string{
		"no-frame-pointers": {"-O2", "-g"},
		"frame-pointers":    {"-O2", "-g", "-fno-omit-frame-pointer"},
	} {
		t.Run(name, func(t *testing.T) {
			pid := startBuilt(t, "cc", ".c", ledgerPingPong, flags...)
			checkLedger(t, pid, "ledger_settle", "ledger_audit", "ledger_post", "pthread_cond_wait", "pthread_cond_signal")
		})
	}
}

// TestCaptureUnwindsCxxMethods: std::mutex and std::condition_variable in
// class methods, -O2, no frame pointers; the methods demangled.
func TestCaptureUnwindsCxxMethods(t *testing.T) {
	needBPF(t)
	if _, err := exec.LookPath("c++"); err != nil {
		t.Skip("no C++ compiler")
	}
	pid := startBuilt(t, "c++", ".cc", ledgerCxx, "-O2", "-g")
	checkLedger(t, pid, "app::Ledger::settle", "", "app::Ledger::post", "pthread_cond_wait", "pthread_cond_signal")
}
