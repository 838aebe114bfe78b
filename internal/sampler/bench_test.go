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

// BenchmarkRefresh10kThreads is the figure the README quotes: the CPU time
// of one full /proc pass with 10,000 idle threads on the box. It reports
// cpu-ms/refresh (user+system time of this process, not wall time) and must
// stay at or under 20 ms on a 2-core machine.
func BenchmarkRefresh10kThreads(b *testing.B) {
	pid := startIdleThreads(b, 10000)
	s, err := New(Config{Root: "/proc"})
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
