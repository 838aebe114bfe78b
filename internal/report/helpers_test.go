package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

func testHeader() record.Header {
	return record.Header{Facts: hostinfo.Facts{Hostname: "box", Kernel: "6.1.0", CPUs: 2}, CPUs: 2, CtxtopVersion: "test",
		Interval: time.Second, ProcRoot: "/proc", HotThreshold: 1000, Start: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), ZoneName: "UTC"}
}

// writeRecording records samples to a file in dir and returns its path.
func writeRecording(t testing.TB, dir, name string, h record.Header, samples []model.Sample) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := record.NewWriter(f, h, record.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range samples {
		if err := w.Write(&samples[i]); err != nil {
			t.Fatalf("sample %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// burstTID is the thread that bursts in burstSamples.
const (
	burstTID  = 1005
	burstName = "burst-thread"
)

// burstSamples is n samples of a made-up host switching about 100,000
// times a second, with every tracer on, in which one thread, burstTID,
// named burstName in process svc-1000, switches 1,000,000 more times a
// second during samples from..to-1 (counting from 0): a spike it causes.
func burstSamples(n, from, to int) []model.Sample {
	s := recordtest.New(60, 10, false)
	s.Steady = true
	s.BusyRate, s.BusyNoise = 100_000, 0.05
	s.CgroupsAndWaits, s.Wakeups, s.Stacks = true, true, true
	out := make([]model.Sample, n)
	var extra, run uint64
	for i := range out {
		out[i] = s.Next()
		if i >= from && i < to {
			secs := out[i].Time.Sub(out[i-1].Time).Seconds()
			extra += uint64(1_000_000 * secs)
			run += uint64(0.4 * secs * 1e9)
		}
		out[i].System.ContextSwitches += extra
		for j := range out[i].Tasks {
			if t := &out[i].Tasks[j]; t.TID == burstTID {
				t.Comm = burstName
				t.VoluntarySwitches += extra
				t.Timeslices += extra
				t.RunNs += run
			}
		}
	}
	return out
}

// openPlayer opens a recording as the CLI does.
func openPlayer(t testing.TB, path string) *record.Player {
	t.Helper()
	r, err := record.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	p, err := record.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
