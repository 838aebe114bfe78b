package record

import (
	"bytes"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/zstdenc"
)

// hourFile is one hour at 1 s of a made-up host with 1,000 threads of
// which 50 switch every second and 950 sleep, with the default writer
// settings. The busy threads move steadily, as real ones do
// (recordtest.Synth.Steady): each wakes at its own rate of 100–1,000 a
// second, like the README's workload of threads sleeping 1–10 ms, with
// jitter in the rate and in each wake's run and wait nanoseconds.
var hourFile = sync.OnceValue(func() []byte { return recordHour(true, false) })

// hourFileRandom is the worst case: the same host with the busy threads'
// counters moving by uniformly random amounts each second (switches
// 200–20,200, run ns up to 200 ms), which no encoding predicts and no
// compressor shrinks.
var hourFileRandom = sync.OnceValue(func() []byte { return recordHour(false, false) })

// hourFileCgroupsWaits is the steady hour with each process in a cgroup,
// five of them throttled, and wait looks for eight hot threads.
var hourFileCgroupsWaits = sync.OnceValue(func() []byte { return recordHour(true, true) })

func recordHour(steady, cgroupsAndWaits bool) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WriterOptions{})
	if err != nil {
		panic(err)
	}
	s := recordtest.New(1000, 50, false)
	s.Steady = steady
	s.CgroupsAndWaits = cgroupsAndWaits
	s.ReadTimes = true
	for range 3600 {
		smp := s.Next()
		if err := w.Write(&smp); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// hourTarget is the README's size target for hourFile.
const hourTarget = 2e6

// TestHourFitsTarget holds the steady hour to the README's target: one hour
// at 1 s of 1,000 threads, 50 busy every second and 950 idle, in at most
// 2 MB.
func TestHourFitsTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("records an hour of samples, about a second")
	}
	if n := len(hourFile()); n > hourTarget {
		t.Errorf("the steady hour takes %d bytes (%.2f MB), past the %.0f MB target", n, float64(n)/1e6, hourTarget/1e6)
	}
}

// BenchmarkHourSize reports the README's size figures: the steady hour
// (held to its target by TestHourFitsTarget); random-worst, the same with
// counters no encoding predicts; with cgroups and wait looks, what those
// add. Sizes, not times: each hour is recorded once and nothing is timed.
func BenchmarkHourSize(b *testing.B) {
	for _, c := range []struct {
		name string
		file func() []byte
	}{{"steady", hourFile}, {"random-worst", hourFileRandom}, {"cgroups+waits", hourFileCgroupsWaits}} {
		b.Run(c.name, func(b *testing.B) {
			data := c.file()
			b.ReportMetric(float64(len(data))/1e6, "MB/hour")
			b.ReportMetric(float64(len(data))/3600, "bytes/sample")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// rawChunks are a recording's chunks before compression: the input every
// compressor is compared on. CTXTOP_RECORDING names a real recording;
// without it, the made-up hour.
func rawChunks(b testing.TB) (chunks [][]byte, samples int) {
	data := hourFile()
	if p := os.Getenv("CTXTOP_RECORDING"); p != "" {
		var err error
		if data, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
	r, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	for i := range r.chunks {
		raw, err := r.decompress(i, nil)
		if err != nil {
			b.Fatal(err)
		}
		chunks = append(chunks, bytes.Clone(raw))
	}
	return chunks, r.Samples()
}

// BenchmarkCodecs compresses the same chunks with each candidate: the
// figures behind the choice of zstd's default level, and of the
// in-house zstd encoder (zstdenc) that replaced it.
func BenchmarkCodecs(b *testing.B) {
	chunks, samples := rawChunks(b)
	zenc := func(l zstd.EncoderLevel) func([]byte, []byte) []byte {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(l), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
		if err != nil {
			b.Fatal(err)
		}
		return func(dst, src []byte) []byte { return e.EncodeAll(src, dst[:0]) }
	}
	var own zstdenc.Encoder
	gz := func(dst, src []byte) []byte {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		w.Write(src)
		w.Close()
		return buf.Bytes()
	}
	for _, c := range []struct {
		name string
		enc  func(dst, src []byte) []byte
	}{
		{"none", func(dst, src []byte) []byte { return src }},
		{"s2", func(dst, src []byte) []byte { return s2.Encode(dst[:0], src) }},
		{"s2-better", func(dst, src []byte) []byte { return s2.EncodeBetter(dst[:0], src) }},
		{"gzip", gz},
		{"zstd-fastest", zenc(zstd.SpeedFastest)},
		{"zstd-default", zenc(zstd.SpeedDefault)},
		{"zstd-better", zenc(zstd.SpeedBetterCompression)},
		{"zstd-best", zenc(zstd.SpeedBestCompression)},
		{"zstdenc", func(dst, src []byte) []byte { return own.EncodeAll(src, dst[:0]) }}, // used
	} {
		b.Run(c.name, func(b *testing.B) {
			var dst []byte
			total := 0
			for b.Loop() {
				total = 0
				for _, ch := range chunks {
					dst = c.enc(dst, ch)
					total += len(dst) + chunkHeaderSize
				}
			}
			b.ReportMetric(float64(total)/float64(samples)*3600/1e6, "MB/hour")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(samples)/1e3, "µs/sample")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// threadCPU is this thread's CPU time; the benchmark runs locked to one.
func threadCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startThreads runs n threads of which busy wake every millisecond; the
// rest sleep. It returns a stop function.
func startThreads(n, busy int) func() {
	stop := make(chan struct{})
	var ready sync.WaitGroup
	for i := range n {
		ready.Add(1)
		go func() {
			runtime.LockOSThread()
			ready.Done()
			if i >= busy {
				<-stop
				return
			}
			ts := unix.Timespec{Nsec: 1e6}
			for {
				select {
				case <-stop:
					return
				default:
					unix.Nanosleep(&ts, nil)
				}
			}
		}()
	}
	ready.Wait()
	return func() { close(stop) }
}

// BenchmarkRecorderCost is the recorder's CPU per sample beside the
// sampler's, on this host plus 1,000 threads of which 50 are busy: the
// target is at most 20% more than sampling alone. Samples are stamped a
// second apart, so chunks are cut and compressed as at -d 1s.
func BenchmarkRecorderCost(b *testing.B) {
	stop := startThreads(1000, 50)
	defer stop()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s, err := sampler.New(sampler.Config{Root: "/proc"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	f, err := os.CreateTemp(b.TempDir(), "cost")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w, err := NewWriter(f, testHeader(), WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var smp model.Sample
	base := time.Now()
	var sampling, recording time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		time.Sleep(20 * time.Millisecond) // let the busy threads move
		t0 := threadCPU()
		if err := s.Sample(&smp); err != nil {
			b.Fatal(err)
		}
		t1 := threadCPU()
		smp.Time = base.Add(time.Duration(i) * time.Second)
		i++
		if err := w.Write(&smp); err != nil {
			b.Fatal(err)
		}
		t2 := threadCPU()
		sampling += t1 - t0
		recording += t2 - t1
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(sampling.Microseconds())/float64(i), "sample-µs/op")
	b.ReportMetric(float64(recording.Microseconds())/float64(i), "record-µs/op")
	b.ReportMetric(100*float64(recording)/float64(sampling), "record-%-of-sample")
	b.ReportMetric(float64(len(smp.Tasks)), "threads")
}
