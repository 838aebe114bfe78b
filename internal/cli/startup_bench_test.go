package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkBatchStartup10k is the whole binary's CPU time (user+system,
// from its rusage) for a two-report batch run, ctxtop -b -n 2 -d 0.2, with
// 10,000 idle threads and a busy one on the host: as root (the BPF task
// walk) and as nobody (/proc, no taskstats gate), alternating; medians.
// With CTXTOP_BASELINE_BIN set to another build, that build runs beside
// each run too (base-root-cpu-ms, base-nobody-cpu-ms), for before and
// after on the same machine at the same moment. host-threads is the most
// threads the host had during a run: the walk visits them all.
func BenchmarkBatchStartup10k(b *testing.B) {
	testutil.StartCThreads(b, 10000, true)
	// Copies nobody may run: the build directory is private to root.
	dir, err := os.MkdirTemp("", "ctxtop-startup-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	install := func(name, from string) string {
		src, err := os.ReadFile(from)
		if err != nil {
			b.Fatal(err)
		}
		to := filepath.Join(dir, name)
		if err := os.WriteFile(to, src, 0o755); err != nil {
			b.Fatal(err)
		}
		return to
	}
	bin := install("ctxtop", testutil.Binary(b))
	var base string
	if from := os.Getenv("CTXTOP_BASELINE_BIN"); from != "" {
		base = install("ctxtop-base", from)
	}
	most := 0
	run := func(bin string, nobody bool) time.Duration {
		cmd := exec.Command(bin, "-b", "-n", "2", "-d", "0.2")
		if nobody {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		most = max(most, hostThreads(b))
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", bin, err, out)
		}
		most = max(most, hostThreads(b))
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var root, nobody, baseRoot, baseNobody []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if base != "" && i%2 == 1 {
			baseRoot, baseNobody = append(baseRoot, run(base, false)), append(baseNobody, run(base, true))
		}
		root = append(root, run(bin, false))
		nobody = append(nobody, run(bin, true))
		if base != "" && i%2 == 0 {
			baseRoot, baseNobody = append(baseRoot, run(base, false)), append(baseNobody, run(base, true))
		}
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(med(root), "root-cpu-ms")
	b.ReportMetric(med(nobody), "nobody-cpu-ms")
	if base != "" {
		b.ReportMetric(med(baseRoot), "base-root-cpu-ms")
		b.ReportMetric(med(baseNobody), "base-nobody-cpu-ms")
	}
	b.ReportMetric(float64(most), "host-threads")
}

// hostThreads is how many threads the host runs now (/proc/loadavg's
// fourth field, "running/total").
func hostThreads(tb testing.TB) int {
	la, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		tb.Fatal(err)
	}
	f := strings.Fields(string(la))
	if len(f) < 4 {
		tb.Fatalf("/proc/loadavg: %q", la)
	}
	_, total, _ := strings.Cut(f[3], "/")
	n, err := strconv.Atoi(total)
	if err != nil {
		tb.Fatalf("/proc/loadavg: %q", la)
	}
	return n
}
