package taskiter

import (
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/load"
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
	spec, err := loadBench()
	if err != nil {
		b.Fatal(err)
	}
	if err := spec.Variables[benchVarMaskWords].Set(uint32(it.maskWords)); err != nil {
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
// task's PID (count-ms), alternating. count-ms is a floor for any walk
// that visits every task; from the third walk on the walk steps over the
// idle threads (skip.go), looking at a 32nd of them each time: max-ms is
// the dearest walk, skipped the threads a walk left alone, on average.
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
	var n, skipped int
	// The first walk grows the array (a reload), a later one loads and
	// attaches the hooks (loadNs): all full, and not the steady state
	// measured here.
	for range 8 {
		if _, err := it.Walk(); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		time.Sleep(20 * time.Millisecond)
		start := cpuTime()
		if n, err = it.Walk(); err != nil {
			b.Fatal(err)
		}
		walk = append(walk, cpuTime()-start)
		skipped += it.Skipped()
		time.Sleep(20 * time.Millisecond)
		cnt = append(cnt, count())
	}
	b.StopTimer()
	if n < 100000 {
		b.Fatalf("walked %d threads", n)
	}
	b.ReportMetric(median(walk), "walk-ms")
	b.ReportMetric(float64(slices.Max(walk))/float64(time.Millisecond), "max-ms")
	b.ReportMetric(median(cnt), "count-ms")
	b.ReportMetric(float64(skipped)/float64(b.N), "skipped")
	b.ReportMetric(float64(n), "threads")
}

// loadCount loads ctxtop_count and returns a function that runs it once
// and returns the CPU time that took.
func loadCount(b *testing.B, it *Iter) func() time.Duration {
	b.Helper()
	spec, err := loadBench()
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

// BenchmarkHookOverheadPinnedFutex is what the wake-up hooks cost where
// they cost most: a futex ping-pong pinned to one CPU, some 400,000 wake-ups
// a second. As in internal/waketrace's benchmark, one ping-pong runs
// throughout and the hooks are attached and detached under it in turn,
// 60 windows of 100 ms each; each attached window's ns per round trip
// against the mean of the detached windows either side is one paired
// ratio, and the median of them is hooks-on/off. Then the kernel's own
// accounting of a hook's run (bpf_stats, kept out of the windows).
func BenchmarkHookOverheadPinnedFutex(b *testing.B) {
	if !skipArch {
		b.Skip("the hooks are attached only on amd64")
	}
	it, err := Open(Options{SkipAbove: -1})
	if err != nil {
		b.Skip(err)
	}
	defer it.Close()
	cpu := runtime.NumCPU() - 1 // CPU 0 takes most of a VM's interrupts
	run, err := load.Start(load.Config{Mode: load.ModeFutex, CPUs: []int{cpu}, Duration: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Stop()
	time.Sleep(300 * time.Millisecond)
	trips := func() uint64 { return run.Progress().RoundTrips }
	on := func() {
		if err := it.attach(); err != nil {
			b.Fatal(err)
		}
	}
	const window = 100 * time.Millisecond
	for range b.N {
		ratios, offNs := testutil.PairedOverhead(b, trips, 60, 10*time.Millisecond, window, on, it.detach)
		q := func(f float64) float64 { return ratios[int(f*float64(len(ratios)-1))] }
		b.ReportMetric(q(.5), "hooks-on/off")
		b.ReportMetric(offNs, "ns/rt-off")
		b.Logf("hooks attached: median paired ratio %.3f (quartiles %.3f–%.3f), %.0f ns a round trip detached", q(.5), q(.25), q(.75), offNs)

		stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
		if err != nil {
			b.Fatalf("bpf_stats: %v", err)
		}
		on()
		st0, err := it.progs.Wakeup.Stats()
		if err != nil {
			b.Fatal(err)
		}
		n0 := run.Progress().RoundTrips
		time.Sleep(time.Second)
		n1 := run.Progress().RoundTrips
		st1, err := it.progs.Wakeup.Stats()
		if err != nil {
			b.Fatal(err)
		}
		it.detach()
		stats.Close()
		runs := st1.RunCount - st0.RunCount
		perRun := float64((st1.Runtime - st0.Runtime).Nanoseconds()) / float64(max(runs, 1))
		b.ReportMetric(perRun, "ns/hook-run")
		b.Logf("bpf_stats: %.0f ns a sched_wakeup run (timing included), %.2f runs a round trip system-wide", perRun, float64(runs)/float64(max(n1-n0, 1)))
	}
}
