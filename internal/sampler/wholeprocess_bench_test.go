package sampler

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// Whole-process rounds: wholeRounds rounds of wholeRefreshes refreshes
// each, after the first report (the start-up: opening every thread's
// files, the baseline pass and the first interval).
const (
	wholeRounds    = 5
	wholeRefreshes = 6
)

// BenchmarkWholeProcess10kVsC is what a user pays, the whole process, not
// the sampler's pass alone: `ctxtop -b -o json -d 1` over 10,000 idle
// threads, run as nobody (no taskstats, no BPF walk: every thread's
// schedstat is read each refresh, as the C floor reads it), against the C
// pread floor (testutil/cfloor) over the same 10,000 files in the same
// run. Both are paced at one pass a second, the floor's half a second
// after each of ctxtop's refreshes, so that both find the same cold caches
// a one-second interval leaves; each round is wholeRefreshes of each. The
// CPU time of ctxtop is that of the whole process (every thread's run time
// from /proc/PID/task/*/schedstat, in ns; JSON encoding, the garbage
// collector, timers and stdout included) from its first report on, so its
// start-up is left out. Reported: the medians per refresh, x-floor the
// median per-round ratio and x-floor-max the dearest round's, and
// utime+stime-ms/refresh the same CPU time by the process's own utime and
// stime (clock ticks) over all rounds, as a check.
//
// pid watches the workload alone (-p), the floor's very files; host the
// whole host, as `ctxtop -b -o json -d 1` does, which also reads every
// other thread (host-threads counts them all) and lists /proc.
func BenchmarkWholeProcess10kVsC(b *testing.B) {
	bin := nobodyCopy(b, testutil.Binary(b))
	pid := testutil.StartCThreads(b, 10000, false)
	settle(b, pid)
	floor := testutil.StartCFloor(b, "/proc", pid)
	if floor.Threads < 10000 {
		b.Fatalf("the floor opened %d files, want 10000+", floor.Threads)
	}
	for _, host := range []bool{false, true} {
		name := "pid"
		if host {
			name = "host"
		}
		b.Run(name, func(b *testing.B) {
			var goMs, cMs, ratios, ticksMs []float64
			threads := 0
			for range b.N {
				threads = max(threads, countThreads(b))
				g, c, r, t := wholeProcessRun(b, bin, pid, host, floor)
				goMs, cMs, ratios = append(goMs, g...), append(cMs, c...), append(ratios, r...)
				ticksMs = append(ticksMs, t)
			}
			b.ReportMetric(median(goMs), "cpu-ms/refresh")
			b.ReportMetric(median(cMs), "c-ms/refresh")
			b.ReportMetric(median(ratios), "x-floor")
			b.ReportMetric(maxOf(ratios), "x-floor-max")
			b.ReportMetric(median(ticksMs), "utime+stime-ms/refresh")
			b.ReportMetric(float64(threads), "host-threads")
			b.Logf("per round, ctxtop ms/refresh %.1f, floor %.1f, ratios %.2f", goMs, cMs, ratios)
		})
	}
}

// countThreads counts the host's threads.
func countThreads(b *testing.B) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			tasks, _ := os.ReadDir("/proc/" + e.Name() + "/task")
			n += len(tasks)
		}
	}
	return n
}

// wholeProcessRun runs one ctxtop and returns, per round, its CPU ms per
// refresh, the floor's, their ratio, and its utime+stime ms per refresh
// over all rounds.
func wholeProcessRun(b *testing.B, bin string, pid int, host bool, floor *testutil.CFloor) (goMs, cMs, ratios []float64, ticksMs float64) {
	b.Helper()
	// Until killed after the last reading: with -n, a run that fell
	// behind on a busy host could catch up and end before it.
	args := []string{"-b", "-o", "json", "-d", "1"}
	if !host {
		args = append(args, "-p", strconv.Itoa(pid))
	}
	cmd := exec.Command(bin, args...)
	asNobody(cmd)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewReaderSize(out, 1<<20)
	report := func() {
		for {
			_, err := lines.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				continue // the rest of a long line
			}
			if err != nil {
				b.Fatalf("ctxtop ended early: %v", err)
			}
			return
		}
	}
	report() // the start-up
	child := cmd.Process.Pid
	ticks0 := ticksOf(b, child)
	for range wholeRounds {
		g0 := runTimes(b, child)
		var c time.Duration
		for range wholeRefreshes {
			report()
			time.Sleep(500 * time.Millisecond) // half-way to the next refresh
			c += floor.Pass(b)
		}
		g := runTimes(b, child).since(g0)
		goMs = append(goMs, ms(g)/wholeRefreshes)
		cMs = append(cMs, ms(c)/wholeRefreshes)
		ratios = append(ratios, float64(g)/float64(c))
	}
	ticksMs = ms(ticksOf(b, child)-ticks0) / (wholeRounds * wholeRefreshes)
	cmd.Process.Kill()
	io.Copy(io.Discard, lines)
	if err := cmd.Wait(); err != nil && cmd.ProcessState.ExitCode() != -1 {
		b.Fatalf("ctxtop: %v", err) // exited on its own, not killed
	}
	return goMs, cMs, ratios, ticksMs
}

// threadTimes is each thread's run time from its schedstat (ns, where
// utime and stime are clock ticks), by TID.
type threadTimes map[string]time.Duration

func runTimes(b *testing.B, pid int) threadTimes {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	tt := make(threadTimes, len(ents))
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // a thread that ended
		}
		f := bytes.Fields(data)
		if len(f) == 0 {
			b.Fatalf("%s/%s/schedstat: %q", dir, e.Name(), data)
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		tt[e.Name()] = time.Duration(ns)
	}
	return tt
}

// since is the run time the threads in now spent since then: a thread
// that ended in between takes its time with it (the Go runtime rarely ends
// one), so the sum is of the threads both saw and the newcomers.
func (now threadTimes) since(then threadTimes) time.Duration {
	var d time.Duration
	for tid, ns := range now {
		d += ns - then[tid]
	}
	return d
}

// ticksOf is pid's utime+stime.
func ticksOf(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	// Fields 14 and 15, counted from the state (field 3) after the name.
	f := bytes.Fields(data[bytes.LastIndexByte(data, ')')+1:])
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	u, uerr := strconv.ParseInt(string(f[11]), 10, 64)
	s, serr := strconv.ParseInt(string(f[12]), 10, 64)
	if uerr != nil || serr != nil {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	return time.Duration(u+s) * time.Second / 100 // USER_HZ
}

// asNobody runs cmd as nobody when this test runs as root: what an
// unprivileged user gets (no taskstats, no BPF walk).
func asNobody(cmd *exec.Cmd) {
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
}

// nobodyCopy copies bin where nobody may run it: a test build sits in a
// directory only its owner can enter.
func nobodyCopy(b *testing.B, bin string) string {
	b.Helper()
	data, err := os.ReadFile(bin)
	if err != nil {
		b.Fatal(err)
	}
	// Not b.TempDir: its parent is the owner's alone.
	dir, err := os.MkdirTemp("", "ctxtop-nobody-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "ctxtop")
	if err := os.WriteFile(out, data, 0o755); err != nil {
		b.Fatal(err)
	}
	return out
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
