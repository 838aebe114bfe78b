package taskiter

import (
	"errors"
	"io"
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
//	walk-ms     one run of the walk: every record written to the array
//	decode-ms   decoding those records in Go
//	seq-ms      the same records through the seq_file iterator, read(2)
//	            until EOF (decoding not included)
func BenchmarkWalkVsSeqIter(b *testing.B) {
	testutil.StartCThreads(b, 10000, false)
	it, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer it.Close()
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
	var walk, dec, seq []time.Duration
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
	}
	b.StopTimer()
	if n < 10000 || seqBytes < 10000*recordSize(it.maskWords) {
		b.Fatalf("walked %d threads, the seq_file gave %d bytes", n, seqBytes)
	}
	b.ReportMetric(median(walk), "walk-ms")
	b.ReportMetric(median(dec), "decode-ms")
	b.ReportMetric(median(seq), "seq-ms")
	b.ReportMetric(float64(n), "threads")
}
