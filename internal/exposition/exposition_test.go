package exposition

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"
)

var (
	testCounter = NewDesc("test_events_total", "Events seen.", Counter, "kind", "path")
	testGauge   = NewDesc("test_level", "A level.", Gauge)
)

func write(t testing.TB, f Format, ms ...Metric) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, f, ms); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.String()
}

func TestLabelValueEscaping(t *testing.T) {
	for _, c := range []struct {
		name, value, want string
	}{
		{"plain", "app-server", `app-server`},
		{"backslash", `C:\dir`, `C:\\dir`},
		{"double quote", `say "hi"`, `say \"hi\"`},
		{"newline", "two\nlines", `two\nlines`},
		{"all three", "\\\"\n", `\\\"\n`},
		{"tab and CR stay", "a\tb\rc", "a\tb\rc"},
		{"empty", "", ``},
		{"UTF-8 stays", "wörker-€-😀", "wörker-€-😀"},
		{"each bad byte is U+FFFD", "a\xff\xfeb", "a\uFFFD\uFFFDb"},
		{"truncated rune", "x\xe2\x82", "x\uFFFD\uFFFD"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range []Format{Text, OpenMetrics} {
				got := write(t, f, Metric{Desc: testCounter, Labels: []string{c.value, "/"}, Value: 1})
				want := `test_events_total{kind="` + c.want + `",path="/"} 1`
				if !strings.Contains(got, want+"\n") && !strings.Contains(got, want+".0\n") {
					t.Errorf("%s: got\n%s\nwant a line %s", f.ContentType(), got, want)
				}
			}
		})
	}
}

func TestHelpEscaping(t *testing.T) {
	d := NewDesc("test_help", "back\\slash \"quoted\"\nnext line", Gauge)
	m := Metric{Desc: d, Value: 2}
	if got, want := write(t, Text, m), "# HELP test_help back\\\\slash \"quoted\"\\nnext line\n# TYPE test_help gauge\ntest_help 2\n"; got != want {
		t.Errorf("text (-want +got):\n%s", cmp.Diff(want, got))
	}
	// OpenMetrics escapes the double quote in HELP too.
	if got, want := write(t, OpenMetrics, m), "# HELP test_help back\\\\slash \\\"quoted\\\"\\nnext line\n# TYPE test_help gauge\ntest_help 2.0\n# EOF\n"; got != want {
		t.Errorf("OpenMetrics (-want +got):\n%s", cmp.Diff(want, got))
	}
}

func TestFloatFormatting(t *testing.T) {
	for _, c := range []struct {
		v              float64
		text, openMetr string
	}{
		{0, "0", "0.0"},
		{1, "1", "1.0"},
		{-1, "-1", "-1.0"},
		{2727877, "2.727877e+06", "2.727877e+06"},
		{123456, "123456", "123456.0"},
		{0.1, "0.1", "0.1"},
		{64.211273, "64.211273", "64.211273"},
		{1e21, "1e+21", "1e+21"},
		{5e-324, "5e-324", "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308", "1.7976931348623157e+308"},
		{math.Inf(1), "+Inf", "+Inf"},
		{math.Inf(-1), "-Inf", "-Inf"},
		{math.NaN(), "NaN", "NaN"},
		{math.Copysign(0, -1), "0", "0.0"},
	} {
		if got := string(AppendFloat(nil, c.v, false)); got != c.text {
			t.Errorf("text %v: got %q, want %q", c.v, got, c.text)
		}
		if got := string(AppendFloat(nil, c.v, true)); got != c.openMetr {
			t.Errorf("OpenMetrics %v: got %q, want %q", c.v, got, c.openMetr)
		}
	}
}

// Families by name, series by label values in order (not by the bytes of
// the line: "a b" sorts after "a"), whatever order they were collected in.
func TestSortedStableOutput(t *testing.T) {
	ms := []Metric{
		{Desc: testGauge, Value: 3},
		{Desc: testCounter, Labels: []string{"x", "b"}, Value: 1},
		{Desc: testCounter, Labels: []string{"a b", "z"}, Value: 2},
		{Desc: testCounter, Labels: []string{"a", "z"}, Value: 4},
		{Desc: testCounter, Labels: []string{"x", "a"}, Value: 5},
	}
	want := `# HELP test_events_total Events seen.
# TYPE test_events_total counter
test_events_total{kind="a",path="z"} 4
test_events_total{kind="a b",path="z"} 2
test_events_total{kind="x",path="a"} 5
test_events_total{kind="x",path="b"} 1
# HELP test_level A level.
# TYPE test_level gauge
test_level 3
`
	if diff := cmp.Diff(want, write(t, Text, ms...)); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
	om := write(t, OpenMetrics, ms...)
	for _, line := range []string{"# HELP test_events Events seen.\n# TYPE test_events counter\ntest_events_total{kind=\"a\",path=\"z\"} 4.0\n", "test_level 3.0\n# EOF\n"} {
		if !strings.Contains(om, line) {
			t.Errorf("OpenMetrics lacks %q:\n%s", line, om)
		}
	}
}

func TestInvalidMetricsWriteNothing(t *testing.T) {
	other := NewDesc("test_level", "Another with the same name.", Gauge)
	for name, ms := range map[string][]Metric{
		"duplicate series":   {{Desc: testCounter, Labels: []string{"a", "b"}}, {Desc: testCounter, Labels: []string{"a", "b"}, Value: 1}},
		"too few labels":     {{Desc: testCounter, Labels: []string{"a"}}},
		"labels on none":     {{Desc: testGauge, Labels: []string{"a"}}},
		"two families alike": {{Desc: testGauge}, {Desc: other, Value: 1}},
		"no description":     {{Value: 1}},
	} {
		var b bytes.Buffer
		if err := Write(&b, Text, ms); !errors.Is(err, ErrInvalid) || b.Len() != 0 {
			t.Errorf("%s: err %v and %d bytes written, want ErrInvalid and nothing", name, err, b.Len())
		}
	}
}

func TestNewDescRejects(t *testing.T) {
	for name, f := range map[string]func(){
		"bad name":              func() { NewDesc("1abc", "", Gauge) },
		"dash in name":          func() { NewDesc("a-b", "", Gauge) },
		"counter without total": func() { NewDesc("a", "", Counter) },
		"bad label":             func() { NewDesc("a", "", Gauge, "x:y") },
		"reserved label":        func() { NewDesc("a", "", Gauge, "__name__") },
		"unsorted labels":       func() { NewDesc("a", "", Gauge, "b", "a") },
		"repeated label":        func() { NewDesc("a", "", Gauge, "a", "a") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: NewDesc did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestNegotiate(t *testing.T) {
	const (
		text = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"
		om1  = "application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores"
		pb   = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; escaping=underscores"
	)
	for _, c := range []struct{ accept, want string }{
		{"", text},
		{"*/*", text},
		{"text/plain", text},
		{"text/html", text},
		{"garbage,,;", text},
		{"application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5", om1},
		{"application/openmetrics-text", "application/openmetrics-text; version=0.0.1; charset=utf-8; escaping=underscores"},
		{"application/openmetrics-text;version=2.0.0", text},
		// Prometheus 3's default.
		{"application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
			"application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8"},
		// Prometheus with native histograms asks for protobuf first.
		{"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.5,application/openmetrics-text;version=1.0.0;q=0.4,text/plain;version=0.0.4;q=0.3", pb},
		{"text/plain;version=0.0.4;q=0.3,application/openmetrics-text;version=1.0.0;q=0.9", om1},
		{"text/plain;version=0.0.4;escaping=bogus", text},
		{"text/plain;version=0.0.4;escaping=dots", "text/plain; version=0.0.4; charset=utf-8; escaping=dots"},
		{"text/*;q=0.9, application/openmetrics-text;version=1.0.0;q=0.9", om1},
	} {
		if got := Negotiate(c.accept).ContentType(); got != c.want {
			t.Errorf("Accept %q: got %q, want %q", c.accept, got, c.want)
		}
		// expfmt, what client_golang negotiates with, must agree.
		h := make(map[string][]string)
		if c.accept != "" {
			h["Accept"] = []string{c.accept}
		}
		formats := []expfmt.Format{expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtOpenMetrics_0_0_1, expfmt.FmtProtoDelim, expfmt.FmtText}
		if want := string(expfmt.NegotiateAccept(h, formats...)); want != c.want {
			t.Errorf("Accept %q: expfmt negotiates %q, this table %q", c.accept, want, c.want)
		}
	}
}

// Dots escaping (asked for by escaping=dots) doubles every underscore of
// metric and label names; the other schemes leave legacy names alone.
func TestDotsEscaping(t *testing.T) {
	f := Negotiate("text/plain;version=0.0.4;escaping=dots")
	got := write(t, f, Metric{Desc: testCounter, Labels: []string{"a_b", "c"}, Value: 1})
	if want := "# HELP test__events__total Events seen.\n# TYPE test__events__total counter\ntest__events__total{kind=\"a_b\",path=\"c\"} 1\n"; got != want {
		t.Errorf("(-want +got):\n%s", cmp.Diff(want, got))
	}
}

// checkAgainstExpfmt writes ms in every format and checks the result
// against prometheus/common's expfmt: the same bytes as its encoders (for
// valid UTF-8) and readable by its parsers with the same values.
func checkAgainstExpfmt(t *testing.T, ms []Metric) {
	t.Helper()
	Sort(ms)
	var fams []*dto.MetricFamily
	for i, m := range ms {
		if i == 0 || ms[i-1].Desc != m.Desc {
			typ := dto.MetricType_GAUGE
			if m.Desc.typ == Counter {
				typ = dto.MetricType_COUNTER
			}
			fams = append(fams, &dto.MetricFamily{Name: proto.String(m.Desc.name), Help: proto.String(string(appendEscaped(nil, m.Desc.help, escapeNone))), Type: typ.Enum()})
		}
		dm := &dto.Metric{}
		for j, v := range m.Labels {
			dm.Label = append(dm.Label, &dto.LabelPair{Name: proto.String(m.Desc.labels[j]), Value: proto.String(string(appendEscaped(nil, v, escapeNone)))})
		}
		if m.Desc.typ == Counter {
			dm.Counter = &dto.Counter{Value: proto.Float64(m.Value)}
		} else {
			dm.Gauge = &dto.Gauge{Value: proto.Float64(m.Value)}
		}
		fam := fams[len(fams)-1]
		fam.Metric = append(fam.Metric, dm)
	}
	for _, c := range []struct {
		f      Format
		format expfmt.Format
	}{
		{Text, expfmt.NewFormat(expfmt.TypeTextPlain)},
		{OpenMetrics, expfmt.NewFormat(expfmt.TypeOpenMetrics)},
		{Proto, expfmt.NewFormat(expfmt.TypeProtoDelim)},
	} {
		var got, want bytes.Buffer
		if err := Write(&got, c.f, ms); err != nil {
			t.Fatalf("Write: %v", err)
		}
		enc := expfmt.NewEncoder(&want, c.format)
		for _, fam := range fams {
			if err := enc.Encode(fam); err != nil {
				t.Fatalf("expfmt: %v", err)
			}
		}
		if cl, ok := enc.(expfmt.Closer); ok {
			cl.Close()
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s differs from expfmt's (-expfmt +ours):\n%s", c.f.ContentType(), cmp.Diff(want.String(), got.String()))
		}
		// The text decoder hands families over in no set order.
		read := map[string]*dto.MetricFamily{}
		dec := expfmt.NewDecoder(&got, expfmt.Format(c.f.ContentType()))
		for {
			fam := &dto.MetricFamily{}
			err := dec.Decode(fam)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: expfmt cannot read it back: %v\n%s", c.f.ContentType(), err, got.String())
			}
			read[fam.GetName()] = fam
		}
		if len(read) != len(fams) {
			t.Errorf("%s: read back %d families, want %d", c.f.ContentType(), len(read), len(fams))
		}
		for _, fam := range fams {
			if r := read[fam.GetName()]; r == nil || !sameFamily(fam, r) {
				t.Errorf("%s: read back\n%v\nwant\n%v", c.f.ContentType(), r, fam)
			}
		}
	}
}

// sameFamily compares name, type, labels and values (NaN equal to NaN).
func sameFamily(a, b *dto.MetricFamily) bool {
	if a.GetName() != b.GetName() || a.GetType() != b.GetType() || len(a.Metric) != len(b.Metric) {
		return false
	}
	val := func(m *dto.Metric) float64 {
		if m.Counter != nil {
			return m.Counter.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	for i := range a.Metric {
		x, y := a.Metric[i], b.Metric[i]
		if vx, vy := val(x), val(y); vx != vy && !(math.IsNaN(vx) && math.IsNaN(vy)) {
			return false
		}
		// A label with an empty value is no label in the text formats.
		labels := func(m *dto.Metric) map[string]string {
			l := map[string]string{}
			for _, p := range m.Label {
				if p.GetValue() != "" {
					l[p.GetName()] = p.GetValue()
				}
			}
			return l
		}
		if !cmp.Equal(labels(x), labels(y)) {
			return false
		}
	}
	return true
}

func TestSameAsExpfmt(t *testing.T) {
	checkAgainstExpfmt(t, []Metric{
		{Desc: testGauge, Value: math.NaN()},
		{Desc: testCounter, Labels: []string{"x\n\"\\", "é"}, Value: math.Inf(1)},
		{Desc: NewDesc("test_nan", "Gauges may be infinite or negative.", Gauge), Value: math.Inf(-1)},
		{Desc: testCounter, Labels: []string{"", "b"}, Value: 0},
		{Desc: testCounter, Labels: []string{"a", "b"}, Value: 1.5e300},
		{Desc: NewDesc("test_odd_help", "\\n is not \n; \"quoted\"", Gauge, "le"), Labels: []string{"+Inf"}, Value: -1},
	})
}

// The writer never panics, and whatever the label values, HELP and values,
// expfmt reads every format back with the same series.
func FuzzWrite(f *testing.F) {
	f.Add("help", "a", "b", 1.0, true)
	f.Add("with \\ and \n and \"", "x\"y", "\\n", math.Inf(-1), false)
	f.Add("", "", "", math.NaN(), true)
	f.Add("\xff", "\xfe\xff", "ok", math.Copysign(0, -1), false)
	f.Fuzz(func(t *testing.T, help, v1, v2 string, value float64, counter bool) {
		name, typ := "fuzz_gauge", Gauge
		if counter {
			name, typ = "fuzz_events_total", Counter
		}
		d := NewDesc(name, help, typ, "a", "b")
		other := -value
		if counter {
			// OpenMetrics has no negative or NaN counter.
			if math.IsNaN(value) {
				value = 0
			}
			value = math.Abs(value)
			other = value
		}
		ms := []Metric{{Desc: d, Labels: []string{v1, v2}, Value: value}, {Desc: d, Labels: []string{v2, v1}, Value: other}}
		if v1 == v2 {
			var b bytes.Buffer
			if err := Write(&b, Text, ms); !errors.Is(err, ErrInvalid) {
				t.Fatalf("a duplicate series: %v, want ErrInvalid", err)
			}
			ms = ms[:1]
		}
		// The parsers reject a family whose series differ only in
		// invalid bytes, which both become U+FFFD.
		if string(appendEscaped(nil, v1, escapeNone)) == string(appendEscaped(nil, v2, escapeNone)) {
			ms = ms[:1]
		}
		checkAgainstExpfmt(t, ms)
	})
}
