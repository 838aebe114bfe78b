package output

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// BenchmarkJSONReport2000Threads is one JSON line of a busy host's report:
// every thread that ran is a row.
func BenchmarkJSONReport2000Threads(b *testing.B) {
	s := model.Snapshot{Time: time.Unix(1e9, 0), Interval: time.Second, System: model.SystemRates{CPUs: 2}}
	base := model.ThreadRates{PID: 900, Comm: "worker", InvoluntaryPerSec: 12.5, WaitPercent: 3.25, CPUsAllowed: "0-1",
		Hot: true, Why: model.Why{Kind: model.Blocking, HasWait: true, Wait: 3, On: []model.WaitShare{{Reason: "futex", Share: 0.8}}}, WaitOn: []model.WaitShare{{Reason: "futex wait", Share: 0.8}}}
	s.Threads = make([]model.ThreadRates, 2000)
	for i := range s.Threads {
		t := base
		t.TID, t.Comm = 1000+i, fmt.Sprintf("worker-%d", i)
		t.VoluntaryPerSec, t.CPUPercent = float64(i)*1.37, float64(i%100)/3
		s.Threads[i] = t
	}
	j := NewJSON(io.Discard, Options{})
	b.ReportAllocs()
	for b.Loop() {
		if err := j.Write(&s); err != nil {
			b.Fatal(err)
		}
	}
}
