package sampler

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// The task walk's benchmarks measure it side by side with the /proc path
// and the C pread floor, alternating pass by pass in one run so a busy
// machine weighs on all alike, and report the median CPU time of a pass
// (user+system of the process that makes it), in ms:
//
//	walk-ms   the BPF task walk (Source bpf-task-iter), the whole host
//	kernel-ms of which the walk program's run in the kernel (bpf_stats
//	          run_time_ns), the rest being Go's: matching and the Sample
//	proc-ms   the /proc path, the whole host, taskstats gate on
//	floor-ms  C, pread of the workload's kept-open schedstat files only
//	walk/floor
//
// host-threads is how many threads the host had: the walk and the /proc
// path read all of them, the floor only the workload's.

// BenchmarkTaskIter10kOneBusy: 10,000 idle threads and one that wakes
// every millisecond, so the process always ran and /proc must pread every
// thread's schedstat.
func BenchmarkTaskIter10kOneBusy(b *testing.B) {
	pid := testutil.StartCThreads(b, 10000, true)
	walk := newBenchSampler(b, Config{Root: "/proc"}, SourceTaskIter)
	proc := newBenchSampler(b, Config{Root: "/proc", NoTaskIter: true}, SourceProc)
	floor := testutil.StartCFloor(b, "/proc", pid)
	if floor.Threads < 10000 {
		b.Fatalf("the floor keeps %d files open, want 10000+", floor.Threads)
	}
	kernel := startKernelClock(b, walk)
	var smp model.Sample
	var w, k, p, f []time.Duration
	warmSkipping(b, walk, &smp)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		// A gap as between refreshes: the busy thread runs in it.
		time.Sleep(20 * time.Millisecond)
		k0 := kernel()
		w = append(w, timePass(b, walk, &smp))
		k = append(k, kernel()-k0)
		time.Sleep(20 * time.Millisecond)
		p = append(p, timePass(b, proc, &smp))
		time.Sleep(20 * time.Millisecond)
		f = append(f, floor.Pass(b))
	}
	b.StopTimer()
	if countPID(&smp, pid) < 10000 {
		b.Fatalf("saw %d threads of the workload", countPID(&smp, pid))
	}
	b.ReportMetric(ms(median(w)), "walk-ms")
	b.ReportMetric(ms(median(k)), "kernel-ms")
	b.ReportMetric(ms(median(p)), "proc-ms")
	b.ReportMetric(ms(median(f)), "floor-ms")
	b.ReportMetric(float64(median(w))/float64(median(f)), "walk/floor")
	b.ReportMetric(float64(len(smp.Tasks)), "host-threads")
}

// BenchmarkTaskIter100kIdle: 100,000 idle threads (pid_max and threads-max
// raised for it and restored after; skipped when they cannot be). Besides
// the pass it reports the sampler's process RSS and open fds after the
// passes: the walk keeps no file per thread, the /proc path one schedstat
// file each (as many as the open-file limit allows). From the second pass
// on the walk steps over the idle threads (taskiter's skip.go), looking at
// a 32nd of them each pass: max-ms is the dearest pass, skipped the
// threads a pass left alone, on average.
func BenchmarkTaskIter100kIdle(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("100,000 threads need pid_max and threads-max raised, as root")
	}
	testutil.RaiseThreadLimits(b, 100000)
	pid := testutil.StartCThreads(b, 100000, false)
	walk := newBenchSampler(b, Config{Root: "/proc"}, SourceTaskIter)
	kernel := startKernelClock(b, walk)
	var smp model.Sample
	var w, k []time.Duration
	skipped := 0
	// The bench sampler's first passes grew the walk's array.
	warmSkipping(b, walk, &smp)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		time.Sleep(20 * time.Millisecond)
		k0 := kernel()
		w = append(w, timePass(b, walk, &smp))
		k = append(k, kernel()-k0)
		skipped += walk.it.it.Skipped()
	}
	b.StopTimer()
	if n := countPID(&smp, pid); n < 100000 {
		b.Fatalf("saw %d threads of the workload, want 100000+", n)
	}
	b.ReportMetric(ms(median(w)), "walk-ms")
	b.ReportMetric(ms(slices.Max(w)), "max-ms")
	b.Logf("passes (ms): %v", w)
	b.ReportMetric(float64(skipped)/float64(b.N), "skipped")
	b.ReportMetric(ms(median(k)), "kernel-ms")
	b.ReportMetric(float64(len(smp.Tasks)), "host-threads")
	b.ReportMetric(selfRSSMiB(b), "rss-MiB")
	b.ReportMetric(float64(openFDs(b)), "fds")
}

// BenchmarkTaskIterStartup10k is what a two-report batch run costs the
// sampler before and in its passes: New, then two passes 100 ms apart,
// with 10,000 idle threads and a busy one. cpu-ms is the walk's, proc-ms
// the /proc path's, alternating run by run.
func BenchmarkTaskIterStartup10k(b *testing.B) {
	testutil.StartCThreads(b, 10000, true)
	var w, p []time.Duration
	run := func(cfg Config, want string) time.Duration {
		start := cpuTime()
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		if s.Source() != want {
			b.Fatalf("source %s, want %s (%s)", s.Source(), want, s.SourceNote())
		}
		var smp model.Sample
		for i := range 2 {
			if i > 0 {
				time.Sleep(100 * time.Millisecond)
			}
			if err := s.Sample(&smp); err != nil {
				b.Fatal(err)
			}
		}
		return cpuTime() - start
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w = append(w, run(Config{Root: "/proc"}, SourceTaskIter))
		p = append(p, run(Config{Root: "/proc", NoTaskIter: true}, SourceProc))
	}
	b.ReportMetric(ms(median(w)), "walk-ms")
	b.ReportMetric(ms(median(p)), "proc-ms")
}

// warmSkipping makes passes until the walk has loaded and attached its
// hooks (taskiter's skip.go: at the first pass of a sampler that stays on
// a big host, or a few later on a loaded one), and one more, which is the
// steady state the benchmarks measure.
func warmSkipping(b *testing.B, s *Sampler, smp *model.Sample) {
	b.Helper()
	for range 100 {
		timePass(b, s, smp)
		if s.it.it.Skipping() {
			timePass(b, s, smp)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	b.Fatal("the walk never stepped over idle threads")
}

func newBenchSampler(b *testing.B, cfg Config, want string) *Sampler {
	b.Helper()
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if s.Source() != want {
		b.Fatalf("source %s, want %s (%s)", s.Source(), want, s.SourceNote())
	}
	var smp model.Sample
	for range 2 { // the first opens files and learns the gate
		if err := s.Sample(&smp); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// startKernelClock turns the kernel's BPF statistics on for the rest of
// the benchmark and returns a clock of the time s's walk program has run.
func startKernelClock(b *testing.B, s *Sampler) func() time.Duration {
	b.Helper()
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		b.Fatalf("bpf_stats: %v", err)
	}
	b.Cleanup(func() { stats.Close() })
	return func() time.Duration {
		st, err := s.it.it.Stats()
		if err != nil {
			b.Fatal(err)
		}
		return st.Runtime
	}
}

func timePass(b *testing.B, s *Sampler, smp *model.Sample) time.Duration {
	start := cpuTime()
	if err := s.Sample(smp); err != nil {
		b.Fatal(err)
	}
	return cpuTime() - start
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func selfRSSMiB(b *testing.B) float64 {
	st, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Fatal(err)
	}
	f := strings.Fields(string(st))
	pages, err := strconv.Atoi(f[1])
	if err != nil {
		b.Fatal(err)
	}
	return float64(pages*os.Getpagesize()) / (1 << 20)
}

func openFDs(b *testing.B) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		b.Fatal(err)
	}
	return len(ents)
}
