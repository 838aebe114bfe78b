package record

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

func testHeader() Header {
	return Header{Facts: hostinfo.Facts{Hostname: "box", Kernel: "6.1.0"}, CPUs: 2, CtxtopVersion: "test", Interval: time.Second,
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
		s.Moved = append([]int32(nil), s.Moved...)
		out = append(out, s)
	}
	return r, out
}

var sampleCmp = []cmp.Option{
	cmpopts.EquateEmpty(),
	// How the decoder came to a sample, not what was recorded.
	cmpopts.IgnoreFields(model.Sample{}, "Seq", "SameTasksAs", "Moved"),
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
	if diff := cmp.Diff(testHeader().Facts, r.Header.Facts); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
}

// Steady threads are the case the packed counters predict well: their
// small second differences must come back as the exact counters.
func TestRoundTripOfSteadyThreadsIsExact(t *testing.T) {
	s := recordtest.New(60, 10, true)
	s.Steady = true
	in := make([]model.Sample, 40)
	for i := range in {
		in[i] = s.Next()
	}
	data := record(t, in, WriterOptions{FlushEvery: 3 * time.Second, KeyframeEvery: 10 * time.Second})
	_, got := decoded(t, data)
	if diff := cmp.Diff(in, got, sampleCmp...); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}

func TestUnchangedTasksCostNothing(t *testing.T) {
	idle := recordtest.Run(1000, 0, 2, false)
	busy := recordtest.Run(1000, 50, 2, false)
	var e encoder
	frame := func(s []model.Sample) int {
		e = encoder{}
		if _, err := e.appendFrame(nil, &s[0], 0, true); err != nil {
			t.Fatal(err)
		}
		b, err := e.appendFrame(nil, &s[1], int64(time.Second), false)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatal("an empty frame")
		}
		return len(b)
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

// fill sets every field of v, recursively, to a value no other field of
// the same sample has, so a field the codec drops or swaps shows in a
// diff. It fails on a kind it does not know, so a new kind of field makes
// this test be extended rather than pass by leaving it zero.
type filler struct {
	t *testing.T
	n int
}

func (f *filler) next() int { f.n++; return f.n }

func (f *filler) fill(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 3, 1, 10, 0, f.next(), 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			f.fill(v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(f.next()))
	case reflect.Uint8:
		v.SetUint(uint64('A' + f.next()%26))
	case reflect.Uint64:
		v.SetUint(uint64(f.next()) * 1_000_003)
	case reflect.Float64:
		v.SetFloat(float64(f.next()) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		// Zero-padded, so the values of one field sort in fill order.
		v.SetString(fmt.Sprintf("v%06d", f.next()))
	case reflect.Array:
		for i := range v.Len() {
			f.fill(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), path)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		v.Set(s)
	default:
		f.t.Fatalf("%s: fill does not know kind %s; teach it, and the codec the field", path, v.Kind())
	}
}

// fullSample is a Sample with every field set; from makes each sample's
// values differ from the last one's.
func fullSample(t *testing.T, from int) model.Sample {
	t.Helper()
	var s model.Sample
	f := &filler{t: t, n: from}
	f.fill(reflect.ValueOf(&s).Elem(), "Sample")
	// What a sampler guarantees: CPU arrays as long as CPUs says.
	s.System.CPUs = 2
	// A stack's kernel frames are some of its frames; where a thread
	// blocked has no waker.
	for _, cs := range [][]model.StackCount{s.Stacks.Blocked, s.Stacks.Woken} {
		for i := range cs {
			cs[i].KernelFrames = 1
		}
	}
	for i := range s.Stacks.Blocked {
		s.Stacks.Blocked[i].Waker = ""
	}
	// Which read a sample was, and what changed since the one before, the
	// decoder says; they are not recorded.
	s.Seq, s.SameTasksAs, s.Moved = 0, 0, nil
	// A container's title is made from its names, not recorded.
	for i := range s.Cgroups {
		if c := s.Cgroups[i].Container; c != nil {
			s.Cgroups[i].Container = model.Seal(*c)
		}
	}
	return s
}

// TestRoundTripKeepsEveryField records samples whose every field is set,
// and changes, and replays them equal. A field added to model.Sample is
// set by fill, so this fails until the format records it.
func TestRoundTripKeepsEveryField(t *testing.T) {
	in := []model.Sample{fullSample(t, 0), fullSample(t, 1000), fullSample(t, 1000), fullSample(t, 5000)}
	// Sample 2 repeats sample 1's counters: the "nothing changed" case,
	// with the clock moving on.
	in[2].Time = in[1].Time.Add(time.Second)
	// ...but for one task that moved to another cgroup and nothing else.
	in[2].Tasks[0].Cgroup = "v-moved"
	in[3].Time = in[2].Time.Add(time.Second)
	for _, keyEvery := range []time.Duration{0, time.Nanosecond} {
		_, got := decoded(t, record(t, in, WriterOptions{KeyframeEvery: keyEvery}))
		if diff := cmp.Diff(in, got, sampleCmp...); diff != "" {
			t.Errorf("keyframe every %v: samples (-want +got):\n%s", keyEvery, diff)
		}
	}
}

// TestCgroupsAndWaitsFromAFileAreSanitizedAndBounded: cgroup paths, wait
// reasons, wchan and syscall lines are printable and at most maxString
// bytes after reading.
func TestCgroupsAndWaitsFromAFileAreSanitizedAndBounded(t *testing.T) {
	in := recordtest.Run(3, 1, 2, false)
	long := strings.Repeat("x", 3*maxString)
	for i := range in {
		in[i].Tasks[0].Cgroup = "/evil\x1b[2J"
		in[i].Cgroups = []model.CgroupCounters{{Path: "/evil\x1b[2J"}, {Path: "/long/" + long}}
		in[i].Waits = []model.WaitTally{{PID: in[i].Tasks[0].PID, TID: in[i].Tasks[0].TID, Looks: 3,
			Reasons: []model.ReasonCount{{Reason: "pipe\u202eread", N: 2}}, Wchan: "a\x07b", Syscall: long, Settled: i == 1}}
	}
	_, got := decoded(t, record(t, in, WriterOptions{}))
	if got[0].Waits[0].Settled || !got[1].Waits[0].Settled {
		t.Errorf("settled read back %v, %v; written false, true", got[0].Waits[0].Settled, got[1].Waits[0].Settled)
	}
	g := got[1]
	if len(g.Tasks) == 0 || len(g.Cgroups) != 2 || len(g.Waits) != 1 || len(g.Waits[0].Reasons) != 1 {
		t.Fatalf("read back %d tasks, %d cgroups, %d waits; want the 2 cgroups and 1 wait written", len(g.Tasks), len(g.Cgroups), len(g.Waits))
	}
	want := []string{"/evil?[2J", "/evil?[2J", ("/long/" + long)[:maxString], "pipe?read", "a?b", long[:maxString]}
	have := []string{g.Tasks[0].Cgroup, g.Cgroups[0].Path, g.Cgroups[1].Path, g.Waits[0].Reasons[0].Reason, g.Waits[0].Wchan, g.Waits[0].Syscall}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("strings read back (-want +got):\n%s", diff)
	}
}

// TestCgroupsCostNothingWhenUnchanged: a task's cgroup is written with its
// identity and a cgroup's counters only when they moved, so a frame in
// which only the tasks' counters moved holds no path at all.
func TestCgroupsCostNothingWhenUnchanged(t *testing.T) {
	in := recordtest.Run(100, 10, 3, false)
	const path = "/system.slice/pingpong-unique.service"
	for i := range in {
		for k := range in[i].Tasks {
			in[i].Tasks[k].Cgroup = path
		}
		in[i].Cgroups = []model.CgroupCounters{{Path: path, HasThrottling: true, Periods: 10, LimitCPUs: 0.5}}
	}
	in[2].Cgroups[0].Throttled = 3
	var e encoder
	var frames [][]byte
	for i := range in {
		b, err := e.appendFrame(nil, &in[i], int64(i)*int64(time.Second), i == 0)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, b)
	}
	got := []int{bytes.Count(frames[0], []byte(path)), bytes.Count(frames[1], []byte(path)), bytes.Count(frames[2], []byte(path))}
	// Keyframe: each of 100 tasks and the cgroup; then nothing; then the
	// cgroup whose throttled count moved.
	if diff := cmp.Diff([]int{101, 0, 1}, got); diff != "" {
		t.Errorf("paths written per frame (-want +got):\n%s", diff)
	}
}
