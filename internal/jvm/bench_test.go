package jvm

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkAskPerfMap asks an idle JVM (Spin, some 450 methods compiled)
// for a perf map: the first time starts its attach listener (first-ms),
// the following reuse it.
func BenchmarkAskPerfMap(b *testing.B) {
	classes := testutil.JavaClasses(b)
	j := testutil.StartJava(b, classes, nil, nil, "Spin")
	pid := j.Cmd.Process.Pid
	b.Cleanup(func() { os.Remove(fmt.Sprintf("/tmp/perf-%d.map", pid)) })
	start := time.Now()
	if _, err := AskPerfMap("/proc", pid, timeout); err != nil {
		b.Fatal(err)
	}
	first := time.Since(start)
	b.ResetTimer()
	for b.Loop() {
		if _, err := AskPerfMap("/proc", pid, timeout); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
}
