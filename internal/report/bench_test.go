package report

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// hourRecording records an hour at 1 s of a made-up host with 10,000
// threads, 50 busy every second, in cgroups with wait looks, and a storm
// of 10 s half-way: the size the report must stay light for.
func hourRecording(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "hour.ctxrec")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w, err := record.NewWriter(f, testHeader(), record.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	s := recordtest.New(10_000, 50, false)
	s.Steady, s.CgroupsAndWaits, s.ReadTimes = true, true, true
	s.StormFrom, s.StormTo = 1800, 1810
	for range 3600 {
		smp := s.Next()
		if err := w.Write(&smp); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*counter)(nil)

// cpuTime is the CPU time this process has used, the garbage collector's
// included: on a busy machine wall time says more about the neighbours.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHourReport is what ctxtop report costs on an hour at 10,000
// threads: the one pass that reads the recording (decoding every frame
// once to index and check it), marks every sample and gathers the report
// (s-pass), and the page. It reports the page's size and the CPU seconds
// all of it took.
func BenchmarkHourReport(b *testing.B) {
	path := hourRecording(b)
	b.ResetTimer()
	for range b.N {
		start, cpu0 := time.Now(), cpuTime(b)
		ps := ForReport()
		r, _, err := pipeline.OpenPlayer(path, modelOptions(), pipeline.Visit{Each: ps.Add})
		if err != nil {
			b.Fatal(err)
		}
		pass := time.Since(start)
		rep, err := ps.Report(r, path, "bench")
		if err != nil {
			b.Fatal(err)
		}
		var c counter
		if err := WriteHTML(&c, rep); err != nil {
			b.Fatal(err)
		}
		r.Close()
		b.ReportMetric(float64(c.n)/1024, "KB/page")
		b.ReportMetric(pass.Seconds(), "s-pass")
		b.ReportMetric((cpuTime(b) - cpu0).Seconds(), "s-cpu")
	}
}

// BenchmarkHourReplayStart is what ctxtop replay costs before its first
// screen on the same hour: reading the recording and marking every sample
// in one pass, and the first snapshot.
func BenchmarkHourReplayStart(b *testing.B) {
	path := hourRecording(b)
	b.ResetTimer()
	for range b.N {
		cpu0 := cpuTime(b)
		r, p, err := pipeline.OpenPlayer(path, modelOptions(), pipeline.Visit{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Next(); err != nil {
			b.Fatal(err)
		}
		r.Close()
		b.ReportMetric((cpuTime(b) - cpu0).Seconds(), "s-cpu")
	}
}
