package sampler

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
)

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// The 10k benchmarks are the figures the README quotes: the CPU time of one
// full /proc pass with a 10,000-thread process on the box, reported as
// cpu-ms/refresh (user+system time of this process, not wall time).
//
//	Idle:    every thread asleep; with taskstats the whole process is one query
//	OneBusy: one thread wakes every millisecond, so the process always ran
//	         and every thread's schedstat is read: the per-thread floor
//	NoGate:  idle, taskstats off (what an unprivileged user gets)
func BenchmarkRefresh10kThreadsIdle(b *testing.B)    { benchRefresh(b, false, false) }
func BenchmarkRefresh10kThreadsOneBusy(b *testing.B) { benchRefresh(b, true, false) }
func BenchmarkRefresh10kThreadsNoGate(b *testing.B)  { benchRefresh(b, false, true) }

func benchRefresh(b *testing.B, busy, noGate bool) {
	pid := startWorkload(b, 10000, busy).pid
	s, err := New(Config{Root: "/proc", NoTaskstats: noGate})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var smp model.Sample
	if err := s.Sample(&smp); err != nil { // first pass opens every fd
		b.Fatal(err)
	}
	if n := countPID(&smp, pid); n < 10000 {
		b.Fatalf("saw %d threads of the workload, want 10000+", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := s.Sample(&smp); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/refresh")
	b.ReportMetric(float64(len(smp.Tasks)), "threads")
	gate := 0.0
	if s.TaskstatsGate() {
		gate = 1
	}
	b.ReportMetric(gate, "taskstats")
}

// BenchmarkRefreshHost is one pass over whatever this host runs.
func BenchmarkRefreshHost(b *testing.B) {
	s, err := New(Config{Root: "/proc"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var smp model.Sample
	if err := s.Sample(&smp); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Sample(&smp); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(smp.Tasks)), "threads")
}

func countPID(s *model.Sample, pid int) int {
	n := 0
	for _, t := range s.Tasks {
		if t.PID == pid {
			n++
		}
	}
	return n
}
