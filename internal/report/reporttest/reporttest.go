// Package reporttest makes recordings for the report's and comparison's
// tests: a made-up host with a known burst by a known thread.
package reporttest

import (
	"os"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// BurstTID is the thread that bursts in Burst, named BurstName, in
// process svc-1000 (PID 1000).
const (
	BurstTID  = 1005
	BurstName = "burst-thread"
)

// Header is a recording's header for a 2-CPU host named box.
func Header() record.Header {
	return record.Header{Facts: hostinfo.Facts{Hostname: "box", Kernel: "6.1.0", CPUs: 2}, CPUs: 2, CtxtopVersion: "test",
		Interval: time.Second, ProcRoot: "/proc", HotThreshold: 1000, Start: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), ZoneName: "UTC"}
}

// Steady is n samples of a made-up host switching about 100,000 times a
// second, its busy threads steady, with cgroups, wait looks and wake-ups.
func Steady(n int) []model.Sample { return run(n, 0, 0, false) }

// Burst is Steady with the stack tracer on, in which BurstTID switches
// 1,000,000 more times a second, at 40% CPU, during samples from..to-1
// (counting from 0): a spike it causes.
func Burst(n, from, to int) []model.Sample { return run(n, from, to, true) }

func run(n, from, to int, stacks bool) []model.Sample {
	s := recordtest.New(60, 10, false)
	s.Steady = true
	s.BusyRate, s.BusyNoise = 100_000, 0.05
	s.CgroupsAndWaits, s.Wakeups, s.Stacks = true, true, stacks
	out := make([]model.Sample, n)
	var extra, run uint64
	for i := range out {
		out[i] = s.Next()
		if i >= from && i < to && i > 0 {
			secs := out[i].Time.Sub(out[i-1].Time).Seconds()
			extra += uint64(1_000_000 * secs)
			run += uint64(0.4 * secs * 1e9)
		}
		out[i].System.ContextSwitches += extra
		if !stacks {
			continue
		}
		for j := range out[i].Tasks {
			if t := &out[i].Tasks[j]; t.TID == BurstTID {
				t.Comm = BurstName
				t.VoluntarySwitches += extra
				t.Timeslices += extra
				t.RunNs += run
			}
		}
	}
	return out
}

// Write records samples to path.
func Write(path string, h record.Header, samples []model.Sample) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := record.NewWriter(f, h, record.WriterOptions{})
	if err != nil {
		f.Close()
		return err
	}
	for i := range samples {
		if err := w.Write(&samples[i]); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
