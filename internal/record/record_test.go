package record

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

func testHeader() Header {
	return Header{Host: "box", Kernel: "6.1.0", CPUs: 2, CtxtopVersion: "test", Interval: time.Second,
		ProcRoot: "/proc", HotThreshold: 1000, Start: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), ZoneName: "UTC"}
}

// record writes samples and returns the file's bytes.
func record(t *testing.T, samples []model.Sample, o WriterOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), o)
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
	return buf.Bytes()
}

// decoded plays every frame of data and returns the samples as read.
func decoded(t *testing.T, data []byte) (*Recording, []model.Sample) {
	t.Helper()
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var d decoder
	var out []model.Sample
	for i := range r.frames {
		b, err := r.frameBytes(i)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.apply(b); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		var s model.Sample
		d.sample(&s, time.UTC)
		s.Tasks = append([]model.TaskCounters(nil), s.Tasks...)
		out = append(out, s)
	}
	return r, out
}

var sampleCmp = []cmp.Option{
	cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) }),
}

func TestRoundTripGivesBackEverySample(t *testing.T) {
	in := recordtest.Run(60, 10, 40, true)
	// Short flush and keyframe periods, so chunks and keyframes both repeat.
	data := record(t, in, WriterOptions{FlushEvery: 3 * time.Second, KeyframeEvery: 10 * time.Second})
	r, got := decoded(t, data)
	if diff := cmp.Diff(in, got, sampleCmp...); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if len(r.Notes) != 0 {
		t.Errorf("notes on an intact file: %q", r.Notes)
	}
	if diff := cmp.Diff(testHeader().Host, r.Header.Host); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
}

func TestUnchangedTasksCostNothing(t *testing.T) {
	idle := recordtest.Run(1000, 0, 2, false)
	busy := recordtest.Run(1000, 50, 2, false)
	var e encoder
	frame := func(s []model.Sample) int {
		e = encoder{}
		b, _ := e.appendFrame(nil, &s[0], 0, true)
		b2, _ := e.appendFrame(nil, &s[1], int64(time.Second), false)
		_ = b
		return len(b2)
	}
	idleLen, busyLen := frame(idle), frame(busy)
	if idleLen > 100 {
		t.Errorf("a frame where no task ran takes %d bytes, want under 100", idleLen)
	}
	if per := (busyLen - idleLen) / 50; per > 40 {
		t.Errorf("a busy task costs %d bytes per frame, want at most 40", per)
	}
}

func TestNamesFromAFileAreSanitized(t *testing.T) {
	in := recordtest.Run(3, 1, 2, false)
	for i := range in {
		in[i].Tasks[0].Comm = "\x1b[2Jevil"
		in[i].Tasks[0].ProcessComm = "a\u202eb"
	}
	_, got := decoded(t, record(t, in, WriterOptions{}))
	if diff := cmp.Diff("?[2Jevil", got[1].Tasks[0].Comm); diff != "" {
		t.Errorf("comm (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("a?b", got[1].Tasks[0].ProcessComm); diff != "" {
		t.Errorf("process comm (-want +got):\n%s", diff)
	}
}
