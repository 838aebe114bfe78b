package exporter

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkScrapeVsNodeExporter10kOneBusy sets ctxtop serve's scrape
// beside Prometheus's node exporter on this host, with 10,000 idle threads
// and a busy one: scrapes alternate, 200 ms apart, as Prometheus asks
// (OpenMetrics, gzip), and the medians of their CPU time are reported:
//
//	ctxtop-ms  one scrape of the exporter (a fresh pass, the BPF task walk
//	           as root, the exposition), this process's CPU time; the
//	           request is served in process, without a socket
//	node-ms    one scrape of prometheus-node-exporter (Debian's, default
//	           collectors) on 127.0.0.1, its threads' CPU time
//	ctxtop/node
//
// The exporter binary is installed with apt-get when missing and run here
// on a private port, never as a service.
func BenchmarkScrapeVsNodeExporter10kOneBusy(b *testing.B) {
	node := startNodeExporter(b)
	testutil.StartCThreads(b, 10000, true)
	s := newScraper(b, false)
	defer s.e.Close()
	s.scrape(b, true)
	if src := s.e.smp.Source; src != sampler.SourceTaskIter {
		b.Fatalf("the exporter reads tasks through %s, want %s", src, sampler.SourceTaskIter)
	}
	s.scrape(b, true)
	node.scrape(b)
	var ours, theirs []time.Duration
	const gap = 200 * time.Millisecond
	b.ResetTimer()
	for range b.N {
		time.Sleep(gap)
		start := cpuTime()
		s.scrape(b, true)
		ours = append(ours, cpuTime()-start)
		time.Sleep(gap)
		theirs = append(theirs, node.scrape(b))
	}
	b.StopTimer()
	med := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[len(d)/2]
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(med(ours)), "ctxtop-ms")
	b.ReportMetric(ms(med(theirs)), "node-ms")
	b.ReportMetric(float64(med(ours))/float64(med(theirs)), "ctxtop/node")
	b.ReportMetric(float64(len(s.e.smp.Tasks)), "threads")
}

type nodeExporter struct {
	pid int
	url string
}

func startNodeExporter(b *testing.B) *nodeExporter {
	b.Helper()
	bin, err := exec.LookPath("prometheus-node-exporter")
	if err != nil {
		installNodeExporter(b)
		if bin, err = exec.LookPath("prometheus-node-exporter"); err != nil {
			b.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--web.listen-address="+addr)
	cmd.Stderr = io.Discard
	testutil.StartWorkload(b, cmd)
	n := &nodeExporter{pid: cmd.Process.Pid, url: "http://" + addr + "/metrics"}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(n.url)
		if err == nil {
			resp.Body.Close()
			return n
		}
		if time.Now().After(deadline) {
			b.Fatalf("node exporter never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// installNodeExporter installs Debian's package with service starts
// forbidden, as .ci/run installs prometheus.
func installNodeExporter(b *testing.B) {
	b.Helper()
	const policy = "/usr/sbin/policy-rc.d"
	if _, err := os.Stat(policy); os.IsNotExist(err) {
		if err := os.WriteFile(policy, []byte("#!/bin/sh\nexit 101\n"), 0o755); err != nil {
			b.Fatal(err)
		}
		defer os.Remove(policy)
	}
	cmd := exec.Command("apt-get", "install", "-y", "-q", "--no-install-recommends", "prometheus-node-exporter")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("installing prometheus-node-exporter: %v\n%s", err, out)
	}
}

// scrape asks as Prometheus does and returns the CPU time the exporter's
// threads spent, from their schedstat run times (nanoseconds, where stat's
// clock ticks are 10 ms).
func (n *nodeExporter) scrape(b *testing.B) time.Duration {
	b.Helper()
	before := n.cpu(b)
	req, err := http.NewRequest(http.MethodGet, n.url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("node exporter: %s", resp.Status)
	}
	return n.cpu(b) - before
}

func (n *nodeExporter) cpu(b *testing.B) time.Duration {
	dir := filepath.Join("/proc", strconv.Itoa(n.pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var sum time.Duration
	for _, e := range ents {
		st, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // a thread that exited took its time with it; rare
		}
		if f := strings.Fields(string(st)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			sum += time.Duration(ns)
		}
	}
	return sum
}
