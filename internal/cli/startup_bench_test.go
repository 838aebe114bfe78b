package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkBatchStartup10k is the whole binary's CPU time (user+system,
// from its rusage) for a two-report batch run, ctxtop -b -n 2 -d 0.2, with
// 10,000 idle threads and a busy one on the host: as root (the BPF task
// walk) and as nobody (/proc, no taskstats gate), alternating; medians.
func BenchmarkBatchStartup10k(b *testing.B) {
	testutil.StartCThreads(b, 10000, true)
	// A copy nobody may run: the build directory is private to root.
	dir, err := os.MkdirTemp("", "ctxtop-startup-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "ctxtop")
	src, err := os.ReadFile(testutil.Binary(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		b.Fatal(err)
	}
	run := func(nobody bool) time.Duration {
		cmd := exec.Command(bin, "-b", "-n", "2", "-d", "0.2")
		if nobody {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("ctxtop: %v\n%s", err, out)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	var root, nobody []time.Duration
	b.ResetTimer()
	for range b.N {
		root = append(root, run(false))
		nobody = append(nobody, run(true))
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		d = slices.Clone(d)
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	b.ReportMetric(med(root), "root-cpu-ms")
	b.ReportMetric(med(nobody), "nobody-cpu-ms")
}
