package exporter

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/logfmt"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startPools runs the pool workload: pools × size idle threads in one process.
func startPools(b *testing.B, pools, size int, busy bool) int {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CTXTOP_POOLS="+strconv.Itoa(pools)+"x"+strconv.Itoa(size))
	if busy {
		cmd.Env = append(cmd.Env, "CTXTOP_BUSY=1")
	}
	cmd.Stderr = os.Stderr
	_, out := testutil.StartWorkload(b, cmd)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("pool workload did not start: %q %v", line, err)
	}
	return cmd.Process.Pid
}

// The 10k benchmarks are the README's cost figures. A child process runs
// 10,000 idle threads in 100 pools (pool-a-0 ... pool-dv-99: 100 thread
// groups); each iteration makes one batch refresh (pipeline.Live.Next, what
// ctxtop -b does per report) and one scrape (a fresh pass over /proc, the
// group sums and the exposition, gzip-compressed as Prometheus asks), each
// timed by this process's CPU time:
//
//	cpu-ms/scrape, cpu-ms/refresh and their ratio (target: at most 1.2)
//	series and body-bytes of the uncompressed text exposition of the pool
//	process alone (and host metrics); host-gzip-bytes of the whole host's
//
// Idle: every thread asleep (taskstats skips the process when root).
// OneBusy: one thread wakes every millisecond, so every thread is read.
// NoGate: idle, taskstats off, as for a user without CAP_NET_ADMIN.
func BenchmarkScrape10kThreadsIdle(b *testing.B)    { benchScrape(b, false, false) }
func BenchmarkScrape10kThreadsOneBusy(b *testing.B) { benchScrape(b, true, false) }
func BenchmarkScrape10kThreadsNoGate(b *testing.B)  { benchScrape(b, false, true) }

// scraper is an Exporter behind its HTTP handler, sampling on every scrape.
type scraper struct {
	e *Exporter
	h http.Handler
}

func newScraper(b *testing.B, noGate bool, pids ...int) *scraper {
	b.Helper()
	// Judge hot threads at every scrape too (a nominal interval whose
	// minimum is 0): the costliest case.
	cfg := sampling(sampler.Config{Root: "/proc", NoTaskstats: noGate, PIDs: pids})
	cfg.Source.Interval = time.Nanosecond
	e, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	e.window = 0
	h, err := Handler(e, HandlerOptions{Logger: logfmt.New(io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	return &scraper{e: e, h: h}
}

// scrape asks as Prometheus does (OpenMetrics, gzip), or for plain
// uncompressed text, and returns the body.
func (s *scraper) scrape(b *testing.B, asPrometheus bool) []byte {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if asPrometheus {
		req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
		req.Header.Set("Accept-Encoding", "gzip")
	}
	w := httptest.NewRecorder()
	s.h.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		b.Fatalf("scrape: %d %s", w.Code, w.Body.String())
	}
	return w.Body.Bytes()
}

func benchScrape(b *testing.B, busy, noGate bool) {
	pid := startPools(b, 100, 100, busy)
	// Batch refreshes and scrapes alternate in blocks, so a busy machine
	// weighs on both alike. Only one sampler lives at a time: two would
	// share the open-file limit, and the second would run out of kept fds
	// and fall back to open/read/close. Opening and the first two passes of
	// each block are not timed.
	const block = 5
	// Passes come gap apart for both: what a pass costs depends on how
	// many threads ran since the last one, and the taskstats gate on
	// whether anything in a process ran at all.
	const gap = 200 * time.Millisecond
	var scrapeCPU, refreshCPU time.Duration
	var gzBytes int
	var threads, unreadable int
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		k := min(block, b.N-done)
		b.StopTimer()
		mon, err := pipeline.NewLive(pipeline.LiveConfig{Sampler: sampler.Config{Root: "/proc", NoTaskstats: noGate}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := mon.Next(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := cpuTime()
		for range k {
			time.Sleep(gap)
			if _, err := mon.Next(); err != nil {
				b.Fatal(err)
			}
		}
		refreshCPU += cpuTime() - start
		b.StopTimer()
		mon.Close()

		s := newScraper(b, noGate)
		// Two passes, as for the monitor: the first opens every fd, the
		// second learns each process's taskstats activity.
		s.scrape(b, true)
		s.scrape(b, true)
		b.StartTimer()
		start = cpuTime()
		for range k {
			time.Sleep(gap)
			gzBytes = len(s.scrape(b, true))
		}
		scrapeCPU += cpuTime() - start
		b.StopTimer()
		threads, unreadable = len(s.e.smp.Tasks), s.e.smp.Unreadable
		s.e.Close()
		b.StartTimer()
		done += k
	}
	b.StopTimer()

	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(b.N) }
	b.ReportMetric(ms(scrapeCPU), "cpu-ms/scrape")
	b.ReportMetric(ms(refreshCPU), "cpu-ms/refresh")
	if refreshCPU > 0 {
		b.ReportMetric(float64(scrapeCPU)/float64(refreshCPU), "scrape/refresh")
	}
	// The exposition of the pool process alone (and the host's counters):
	// what 10,000 threads in 100 pools add to a scrape.
	s := newScraper(b, noGate, pid)
	s.scrape(b, false)
	last := s.scrape(b, false)
	s.e.Close()
	series := 0
	for _, line := range bytes.Split(last, []byte("\n")) {
		if len(line) > 0 && line[0] != '#' {
			series++
		}
	}
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(float64(len(last)), "body-bytes")
	b.ReportMetric(float64(gzBytes), "host-gzip-bytes")
	b.ReportMetric(float64(threads), "threads")
	b.ReportMetric(float64(unreadable), "unreadable")
}

// BenchmarkExpositionHost is a scrape's work besides the pass over /proc:
// collecting, encoding (OpenMetrics) and gzip of this host's series, served
// from a cached sample.
func BenchmarkExpositionHost(b *testing.B) {
	s := newScraper(b, false)
	defer s.e.Close()
	s.scrape(b, true)
	s.e.window = time.Hour
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	var n int
	for i := 0; i < b.N; i++ {
		n = len(s.scrape(b, true))
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/scrape")
	b.ReportMetric(float64(n), "gzip-bytes")
}

// BenchmarkScrapeJudged10kThreadsIdle is what the hot verdicts cost a
// scrape: the pool process of the 10k benchmarks, scraped 200 ms apart by
// an exporter that takes a Snapshot from the pipeline at every pass (its
// nominal interval's minimum is 0) and by one that never does (an hour),
// in turns, each timed by the process's CPU time. The difference is the
// pipeline's derive over two samples, most of it their reads from memory.
func BenchmarkScrapeJudged10kThreadsIdle(b *testing.B) {
	startPools(b, 100, 100, false)
	var cpu [2]time.Duration
	var n, threads int
	for i := range b.N {
		// Which goes first alternates, so a change in the host's load
		// weighs on both alike.
		for j := range 2 {
			k := (i + j) % 2
			cfg := sampling(sampler.Config{Root: "/proc"})
			cfg.Source.Interval = [2]time.Duration{time.Nanosecond, time.Hour}[k]
			e, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			e.window = 0
			// Two passes untimed, as in benchScrape.
			for range 2 {
				if _, err := e.Collect(nil); err != nil {
					b.Fatal(err)
				}
				time.Sleep(200 * time.Millisecond)
			}
			for range 5 {
				time.Sleep(200 * time.Millisecond)
				start := cpuTime()
				if _, err := e.Collect(nil); err != nil {
					b.Fatal(err)
				}
				cpu[k] += cpuTime() - start
			}
			threads = len(e.smp.Tasks)
			e.Close()
		}
		n += 5
	}
	b.ReportMetric(float64(cpu[0])/float64(time.Millisecond)/float64(n), "judged-cpu-ms/scrape")
	b.ReportMetric(float64(cpu[1])/float64(time.Millisecond)/float64(n), "unjudged-cpu-ms/scrape")
	b.ReportMetric(float64(threads), "threads")
}
