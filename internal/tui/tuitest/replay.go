package tuitest

import (
	"os"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// ReplayFile writes a recording of n samples at 1 s of a host of 40 threads, 5
// busy, with a storm from sample stormFrom to stormTo, to path.
func ReplayFile(path string, n, stormFrom, stormTo int) error {
	return ReplayFileFrom(path, n, stormFrom, stormTo, 2)
}

// ReplayFileFrom is ReplayFile with the recording's header claiming a host
// of cpus CPUs.
func ReplayFileFrom(path string, n, stormFrom, stormTo, cpus int) error {
	s := recordtest.New(40, 5, true)
	s.StormFrom, s.StormTo = stormFrom, stormTo
	return writeReplay(path, n, s, cpus)
}

// TracedReplayFile is ReplayFile with the wake-up tracer's and the stack
// tracer's reads in every sample, as record --wakeups --stacks writes.
func TracedReplayFile(path string, n int, wakeups, stacks bool) error {
	s := recordtest.New(40, 5, true)
	s.Wakeups, s.Stacks = wakeups, stacks
	return writeReplay(path, n, s, 2)
}

// BusyReplayFile writes a recording of n samples at 1 s of a busy host of 2
// CPUs, 40 threads, 5 busy: 120,000 switches a second (60,000 per CPU, six
// times the old fixed spike level) within ±5%, and a burst of three times
// that from sample burstFrom to burstTo (counting from 1, burstTo not
// included).
func BusyReplayFile(path string, n, burstFrom, burstTo int) error {
	s := recordtest.New(40, 5, true)
	s.StormFrom, s.StormTo = burstFrom, burstTo
	s.BusyRate, s.BusyNoise, s.StormFactor = 120_000, 0.05, 3
	return writeReplay(path, n, s, 2)
}

func writeReplay(path string, n int, s *recordtest.Synth, cpus int) error {
	h := record.Header{Facts: hostinfo.Facts{Hostname: "replay-host", Kernel: "6.1.0-test"}, CPUs: cpus, CtxtopVersion: "test", Interval: time.Second,
		ProcRoot: "/proc", HotThreshold: 1000, Start: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), ZoneName: "UTC"}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w, err := record.NewWriter(f, h, record.WriterOptions{})
	if err != nil {
		f.Close()
		return err
	}
	for range n {
		smp := s.Next()
		if err := w.Write(&smp); err != nil {
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
