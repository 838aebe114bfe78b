package wakeup

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// BenchmarkTracerOverheadPinnedFutex is the tracer's cost where it is
// highest: a futex ping-pong pinned to one CPU, which wakes and switches
// about 400,000 times a second. Runs with the programs attached and
// detached alternate, so drift in a busy machine hits both alike; the
// medians and their ratio are reported (target: on/off ≤ 1.05).
func BenchmarkTracerOverheadPinnedFutex(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	bin := testutil.Binary(b)
	run := func() float64 {
		out, err := exec.Command(bin, "load", "--mode", "futex", "--cpus", "0", "--duration", "1s", "-o", "json").Output()
		if err != nil {
			b.Fatalf("ctxtop load: %v", err)
		}
		var r struct {
			Ns float64 `json:"ns_per_round_trip"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil || r.Ns <= 0 {
			b.Fatalf("ctxtop load printed %q: %v", out, err)
		}
		return r.Ns
	}
	const alternations = 5
	b.ReportAllocs()
	var off, on []float64
	for range b.N {
		off, on = off[:0], on[:0]
		for range alternations {
			off = append(off, run())
			tr, err := Open()
			if err != nil {
				b.Fatal(err)
			}
			on = append(on, run())
			// The view would read once a refresh; read so the map is
			// drained as it would be.
			var s model.WakeupSample
			if err := tr.Read(&s); err != nil {
				b.Fatal(err)
			}
			tr.Close()
		}
	}
	slices.Sort(off)
	slices.Sort(on)
	mOff, mOn := off[len(off)/2], on[len(on)/2]
	b.ReportMetric(mOff, "ns/rt-off")
	b.ReportMetric(mOn, "ns/rt-on")
	b.ReportMetric(mOn/mOff, "on/off")
	b.Logf("pinned futex ns/round trip, off: %.0f (runs %.0f), on: %.0f (runs %.0f), ratio %.3f", mOff, off, mOn, on, mOn/mOff)
}

// BenchmarkRead is one refresh's read of the maps with a ping-pong's worth
// of pairs in them.
func BenchmarkRead(b *testing.B) {
	tr, err := Open()
	if err != nil {
		b.Skip(err)
	}
	defer tr.Close()
	var s model.WakeupSample
	b.ReportAllocs()
	for b.Loop() {
		if err := tr.Read(&s); err != nil {
			b.Fatal(err)
		}
	}
}
