package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// minutePlayer plays a recording of n samples a minute apart from start
// (UTC, which the header names), so clock times land on samples.
func minutePlayer(t *testing.T, start time.Time, n int) *pipeline.Player {
	t.Helper()
	h := record.Header{Facts: hostinfo.Facts{Hostname: "h"}, CPUs: 2, Interval: time.Minute, ProcRoot: "/proc", HotThreshold: 1000, Start: start, ZoneName: "UTC"}
	var buf bytes.Buffer
	w, err := record.NewWriter(&buf, h, record.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := recordtest.New(10, 2, false)
	for i := range n {
		smp := s.Next()
		smp.Time = start.Add(time.Duration(i) * time.Minute)
		if err := w.Write(&smp); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := record.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.NewPlayer(r, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReplayRange: the README's --from 10:20 --to +5m on a recording that
// starts after 10:20 opens at its first sample and runs five minutes; +5m
// in --to counts from --from; a clock time before the start is the next
// day only where the recording reaches it.
func TestReplayRange(t *testing.T) {
	day := func(h, m int) time.Time { return time.Date(2026, 3, 1, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name     string
		start    time.Time
		n        int
		from, to string
		// want is the times of the first and last samples in range.
		want [2]time.Time
	}{
		{"before the start", day(10, 21), 30, "10:20", "+5m", [2]time.Time{day(10, 21), day(10, 25)}},
		{"inside", day(10, 0), 60, "10:20", "+5m", [2]time.Time{day(10, 20), day(10, 25)}},
		{"+ from the start, + from --from", day(10, 0), 60, "+10m", "+5m", [2]time.Time{day(10, 10), day(10, 15)}},
		{"--to alone counts from the start", day(10, 0), 60, "", "+5m", [2]time.Time{day(10, 0), day(10, 5)}},
		{"across midnight", day(23, 50), 30, "00:05", "00:10", [2]time.Time{day(24, 5), day(24, 10)}},
		{"RFC 3339", day(10, 0), 60, "2026-03-01T10:30:00Z", "+1m", [2]time.Time{day(10, 30), day(10, 31)}},
	} {
		p := minutePlayer(t, tc.start, tc.n)
		if err := applyRange(p, replayOptions{from: tc.from, to: tc.to}); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		lo, hi := p.Range()
		m := p.Marks()
		if diff := cmp.Diff(tc.want, [2]time.Time{m[lo].Time.UTC(), m[hi].Time.UTC()}); diff != "" {
			t.Errorf("%s: --from %q --to %q (-want +got):\n%s", tc.name, tc.from, tc.to, diff)
		}
	}
}

func TestReplayRangeOutsideTheRecordingIsAnError(t *testing.T) {
	p := minutePlayer(t, time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), 30)
	for _, ro := range []replayOptions{{from: "11:00"}, {to: "09:00"}, {from: "10:20", to: "10:10"}, {from: "+1h"}, {to: "+-5m"}} {
		if err := applyRange(p, ro); err == nil {
			t.Errorf("--from %q --to %q: no error", ro.from, ro.to)
		}
	}
}
