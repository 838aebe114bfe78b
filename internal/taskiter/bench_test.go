package taskiter

import (
	"errors"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// BenchmarkWalkVsSeqIter is why the program walks the task list itself
// rather than serve a seq_file task iterator (SEC("iter/task") read through
// an iterator link): with 10,000 idle threads on the host, alternating
// pass by pass, the median CPU time of
//
//	walk-ms     one run of the walk: the threads at rest, their records
//	            left as they were
//	decode-ms   decoding every record in Go
//	seq-ms      the same records through the seq_file iterator, read(2)
//	            until EOF (decoding not included)
//	count-ms    the walk with nothing read but each task's PID
//	            (ctxtop_count): what stepping through the task list costs
func BenchmarkWalkVsSeqIter(b *testing.B) {
	testutil.StartCThreads(b, 10000, false)
	it, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	count := loadCount(b, it)
	spec, err := loadTaskiter()
	if err != nil {
		b.Fatal(err)
	}
	if err := spec.Variables[taskiterVarMaskWords].Set(uint32(it.maskWords)); err != nil {
		b.Fatal(err)
	}
	var seqObjs struct {
		Seq *ebpf.Program `ebpf:"ctxtop_seq"`
	}
	if err := spec.LoadAndAssign(&seqObjs, nil); err != nil {
		b.Fatal(err)
	}
	defer seqObjs.Seq.Close()
	l, err := link.AttachIter(link.IterOptions{Program: seqObjs.Seq})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	buf := make([]byte, 64<<10)
	var walk, dec, seq, cnt []time.Duration
	var n, seqBytes int
	var r Record
	b.ResetTimer()
	for range b.N {
		start := cpuTime()
		if n, err = it.Walk(); err != nil {
			b.Fatal(err)
		}
		mid := cpuTime()
		for i := range n {
			if err := it.Record(i, &r); err != nil {
				b.Fatal(err)
			}
		}
		end := cpuTime()
		walk, dec = append(walk, mid-start), append(dec, end-mid)

		start = cpuTime()
		rd, err := l.Open()
		if err != nil {
			b.Fatal(err)
		}
		seqBytes = 0
		for {
			k, err := rd.Read(buf)
			seqBytes += k
			if errors.Is(err, io.EOF) || k == 0 && err == nil {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		rd.Close()
		seq = append(seq, cpuTime()-start)
		cnt = append(cnt, count())
	}
	b.StopTimer()
	if n < 10000 || seqBytes < 10000*recordSize(it.maskWords) {
		b.Fatalf("walked %d threads, the seq_file gave %d bytes", n, seqBytes)
	}
	b.ReportMetric(median(walk), "walk-ms")
	b.ReportMetric(median(dec), "decode-ms")
	b.ReportMetric(median(seq), "seq-ms")
	b.ReportMetric(median(cnt), "count-ms")
	b.ReportMetric(float64(n), "threads")
}

// BenchmarkWalk100kIdle is the kernel's part of a pass over 100,000 idle
// threads (pid_max and threads-max raised for it and restored after;
// skipped when they cannot be): the median CPU time of the walk, every
// record at rest (walk-ms), against a walk that reads nothing but each
// task's PID (count-ms), alternating. The difference is what reading the
// counters costs; count-ms is a floor for any walk of the task list.
func BenchmarkWalk100kIdle(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("100,000 threads need pid_max and threads-max raised, as root")
	}
	testutil.RaiseThreadLimits(b, 100000)
	testutil.StartCThreads(b, 100000, false)
	it, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
	count := loadCount(b, it)
	var walk, cnt []time.Duration
	var n int
	b.ResetTimer()
	for range b.N {
		time.Sleep(20 * time.Millisecond)
		start := cpuTime()
		if n, err = it.Walk(); err != nil {
			b.Fatal(err)
		}
		walk = append(walk, cpuTime()-start)
		time.Sleep(20 * time.Millisecond)
		cnt = append(cnt, count())
	}
	b.StopTimer()
	if n < 100000 {
		b.Fatalf("walked %d threads", n)
	}
	b.ReportMetric(median(walk), "walk-ms")
	b.ReportMetric(median(cnt), "count-ms")
	b.ReportMetric(float64(n), "threads")
}

// loadCount loads ctxtop_count and returns a function that runs it once
// and returns the CPU time that took.
func loadCount(b *testing.B, it *Iter) func() time.Duration {
	b.Helper()
	spec, err := loadTaskiter()
	if err != nil {
		b.Fatal(err)
	}
	var objs struct {
		Count *ebpf.Program `ebpf:"ctxtop_count"`
	}
	kernel, err := it.types.Kernel()
	if err != nil {
		b.Fatal(err)
	}
	if err := spec.LoadAndAssign(&objs, &ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{KernelTypes: kernel}, Cache: it.types}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { objs.Count.Close() })
	return func() time.Duration {
		start := cpuTime()
		if _, err := objs.Count.Run(&ebpf.RunOptions{}); err != nil {
			b.Fatal(err)
		}
		return cpuTime() - start
	}
}
