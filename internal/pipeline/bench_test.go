package pipeline

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
	"github.com/ctxtop/ctxtop/internal/sampler"
)

// BenchmarkReplay10kThreads is one interval of a recording of 10,000
// threads (50 busy, some coming and going) through the player: a frame
// decoded and the interval made by Intervals.Next, the pipeline's cost
// per refresh without a pass over /proc.
func BenchmarkReplay10kThreads(b *testing.B) {
	in := recordtest.Run(10_000, 50, 40, true)
	var buf bytes.Buffer
	w, err := record.NewWriter(&buf, record.Header{CPUs: 2, Interval: time.Second, HotThreshold: 1000,
		Start: in[0].Time, ZoneName: "UTC"}, record.WriterOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	r, err := record.Parse(buf.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewPlayer(r, model.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		// In order, as a replay plays; back to the start at the end.
		if _, err := p.Seek(1 + i%(r.Samples()-1)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLiveNextOwnProcess is one live refresh of this process's
// threads: the pass, the looks and Intervals.Next around them.
func BenchmarkLiveNextOwnProcess(b *testing.B) {
	l, err := NewLive(LiveConfig{Sampler: sampler.Config{Root: "/proc", PIDs: []int{os.Getpid()}}})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := l.Next(); err != nil {
			b.Fatal(err)
		}
	}
}
