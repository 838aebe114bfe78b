// Package exposition writes metrics in the formats Prometheus scrapes: the
// text format (version 0.0.4), OpenMetrics 1.0 text, and delimited protobuf
// MetricFamily messages, chosen from the scraper's Accept header as
// prometheus/common's expfmt negotiates them.
//
// It covers what a collector of counters and gauges computed on scrape needs
// and nothing else (no histograms, summaries, exemplars or timestamps), in a
// few kilobytes of code: client_golang and its protobuf runtime cost the
// binary about 2.3 MB for the same output.
//
// Output is stable: families sorted by name, the series of a family by their
// label values in order, as client_golang's registry sorts them. Label names
// within a family are given sorted, so a series' labels come out sorted too.
//
// Escaping follows the text format: in label values backslash, double quote
// and newline become \\, \" and \n; in HELP text backslash and newline (and,
// in OpenMetrics, double quote too). Label values and HELP that are not valid
// UTF-8 get U+FFFD for each bad byte, as the formats require UTF-8.
package exposition

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/sorts"
)

// Type is a metric family's type.
type Type uint8

const (
	// Counter is a value that only goes up (or resets to 0 on restart). Its
	// name must end in _total.
	Counter Type = iota
	// Gauge is a value that goes up and down.
	Gauge
)

// Desc describes a metric family: its name, HELP text, type and label names.
type Desc struct {
	name, help string
	typ        Type
	labels     []string
}

// NewDesc describes a family. It panics on a name or label name that is not
// a legacy Prometheus name ([a-zA-Z_:][a-zA-Z0-9_:]*, no colon in label
// names), on label names that are not sorted and distinct, and on a counter
// whose name lacks _total: descriptions are fixed in code, so these are
// programming errors.
func NewDesc(name, help string, typ Type, labels ...string) *Desc {
	if !validName(name, true) {
		panic(fmt.Sprintf("exposition: invalid metric name %q", name))
	}
	if typ == Counter && !strings.HasSuffix(name, "_total") {
		panic(fmt.Sprintf("exposition: counter %q does not end in _total", name))
	}
	for i, l := range labels {
		if !validName(l, false) || strings.HasPrefix(l, "__") {
			panic(fmt.Sprintf("exposition: %s: invalid label name %q", name, l))
		}
		if i > 0 && labels[i-1] >= l {
			panic(fmt.Sprintf("exposition: %s: label names not sorted and distinct: %q", name, labels))
		}
	}
	return &Desc{name: name, help: help, typ: typ, labels: slices.Clone(labels)}
}

// Name is the family's name.
func (d *Desc) Name() string { return d.name }

// Labels are the family's label names, sorted.
func (d *Desc) Labels() []string { return d.labels }

func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || colon && c == ':' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// Metric is one series: a family, the values of its labels in the order of
// the family's label names, and the value.
type Metric struct {
	Desc   *Desc
	Labels []string
	Value  float64
}

// ErrInvalid is wrapped by Write's errors about the metrics themselves (a
// duplicate series, a wrong number of label values, two families of one
// name), returned before anything is written.
var ErrInvalid = errors.New("invalid metrics")

// Sort sorts ms as they are written: by family name, then by label values
// in order.
func Sort(ms []Metric) {
	sorts.Func(ms, compare)
}

func compare(a, b Metric) int {
	if a.Desc != b.Desc {
		if c := strings.Compare(a.Desc.name, b.Desc.name); c != 0 {
			return c
		}
	}
	for i := 0; i < len(a.Labels) && i < len(b.Labels); i++ {
		if c := strings.Compare(a.Labels[i], b.Labels[i]); c != 0 {
			return c
		}
	}
	return len(a.Labels) - len(b.Labels)
}

// check reports the first problem in sorted ms.
func check(ms []Metric) error {
	for i, m := range ms {
		if m.Desc == nil {
			return fmt.Errorf("%w: a metric without a description", ErrInvalid)
		}
		if len(m.Labels) != len(m.Desc.labels) {
			return fmt.Errorf("%w: %s has %d label values for labels %q", ErrInvalid, m.Desc.name, len(m.Labels), m.Desc.labels)
		}
		if i == 0 {
			continue
		}
		p := ms[i-1]
		if p.Desc != m.Desc && p.Desc.name == m.Desc.name {
			return fmt.Errorf("%w: two families named %s", ErrInvalid, m.Desc.name)
		}
		if p.Desc == m.Desc && slices.Equal(p.Labels, m.Labels) {
			return fmt.Errorf("%w: %s%s collected twice", ErrInvalid, m.Desc.name, labelText(m))
		}
	}
	return nil
}

func labelText(m Metric) string {
	return string(appendLabels(nil, m, Format{}))
}

// Write sorts ms (in place) and writes them to w in format f. An error
// wrapping ErrInvalid comes before any byte is written; any other error is
// w's.
func Write(w io.Writer, f Format, ms []Metric) error {
	Sort(ms)
	if err := check(ms); err != nil {
		return err
	}
	const flushAt = 32 << 10
	buf := make([]byte, 0, flushAt+4096)
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j].Desc == ms[i].Desc {
			j++
		}
		if f.kind == kindProto {
			buf = appendProtoFamily(buf, f, ms[i:j])
		} else {
			buf = appendTextFamily(buf, f, ms[i:j])
		}
		i = j
		if len(buf) >= flushAt {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if f.kind == kindOpenMetrics {
		buf = append(buf, "# EOF\n"...)
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// appendName appends a metric or label name, escaped as the scraper asked:
// only dots escaping changes a legacy name (each _ doubled).
func appendName(b []byte, f Format, name string) []byte {
	if f.escaping != escapeDots {
		return append(b, name...)
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '_' {
			b = append(b, '_')
		}
		b = append(b, name[i])
	}
	return b
}

func appendTextFamily(b []byte, f Format, ms []Metric) []byte {
	d := ms[0].Desc
	om := f.kind == kindOpenMetrics
	// OpenMetrics names a counter family without its _total; its samples keep it.
	family := d.name
	if om && d.typ == Counter {
		family = strings.TrimSuffix(family, "_total")
	}
	b = append(b, "# HELP "...)
	b = appendName(b, f, family)
	b = append(b, ' ')
	helpEscape := escapeText
	if om {
		helpEscape = escapeQuoted
	}
	b = appendEscaped(b, d.help, helpEscape)
	b = append(b, "\n# TYPE "...)
	b = appendName(b, f, family)
	if d.typ == Counter {
		b = append(b, " counter\n"...)
	} else {
		b = append(b, " gauge\n"...)
	}
	for _, m := range ms {
		b = appendName(b, f, d.name)
		b = appendLabels(b, m, f)
		b = append(b, ' ')
		b = AppendFloat(b, m.Value, om)
		b = append(b, '\n')
	}
	return b
}

// appendLabels appends {name="value",...}, nothing without labels.
func appendLabels(b []byte, m Metric, f Format) []byte {
	if len(m.Labels) == 0 {
		return b
	}
	for i, v := range m.Labels {
		if i == 0 {
			b = append(b, '{')
		} else {
			b = append(b, ',')
		}
		b = appendName(b, f, m.Desc.labels[i])
		b = append(b, '=', '"')
		b = appendEscaped(b, v, escapeQuoted)
		b = append(b, '"')
	}
	return append(b, '}')
}

// How appendEscaped escapes: not at all (protobuf strings), backslash and
// newline (text format HELP), or those and double quote (label values,
// OpenMetrics HELP).
const (
	escapeNone = iota
	escapeText
	escapeQuoted
)

// appendEscaped appends s escaped as mode says, each byte that is not UTF-8
// replaced by U+FFFD.
func appendEscaped(b []byte, s string, mode int) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case mode == escapeNone:
			b = append(b, c)
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '"' && mode == escapeQuoted:
			b = append(b, '\\', '"')
		default:
			b = append(b, c)
		}
		i++
	}
	return b
}

// AppendFloat appends v as the text format writes a sample value: the
// shortest representation that reads back exactly, +Inf, -Inf or NaN (and
// 0 for -0). For
// OpenMetrics a value without a dot or an exponent gets ".0", as expfmt
// writes it.
func AppendFloat(b []byte, v float64, openMetrics bool) []byte {
	switch {
	case v == 0:
		// -0 too, as expfmt writes it.
		if openMetrics {
			return append(b, "0.0"...)
		}
		return append(b, '0')
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	if openMetrics && !strings.ContainsAny(string(b[start:]), ".e") {
		b = append(b, '.', '0')
	}
	return b
}

// io.prometheus.client.MetricFamily and its parts, as in client_model's
// metrics.proto (proto2: every field set is written, zeros included).
const (
	pbFamilyName   protowire.Number = 1
	pbFamilyHelp   protowire.Number = 2
	pbFamilyType   protowire.Number = 3
	pbFamilyMetric protowire.Number = 4
	pbMetricLabel  protowire.Number = 1
	pbMetricGauge  protowire.Number = 2
	pbMetricCount  protowire.Number = 3
	pbLabelName    protowire.Number = 1
	pbLabelValue   protowire.Number = 2
	pbValue        protowire.Number = 1
	pbTypeCounter                   = 0
	pbTypeGauge                     = 1
)

// appendProtoFamily appends one length-delimited MetricFamily message.
func appendProtoFamily(b []byte, f Format, ms []Metric) []byte {
	d := ms[0].Desc
	var msg, metric, label, name []byte
	name = appendName(name, f, d.name)
	msg = protowire.AppendTag(msg, pbFamilyName, protowire.BytesType)
	msg = protowire.AppendBytes(msg, name)
	msg = protowire.AppendTag(msg, pbFamilyHelp, protowire.BytesType)
	name = appendEscaped(name[:0], d.help, escapeNone)
	msg = protowire.AppendBytes(msg, name)
	msg = protowire.AppendTag(msg, pbFamilyType, protowire.VarintType)
	valueField := pbMetricGauge
	if d.typ == Counter {
		msg = protowire.AppendVarint(msg, pbTypeCounter)
		valueField = pbMetricCount
	} else {
		msg = protowire.AppendVarint(msg, pbTypeGauge)
	}
	for _, m := range ms {
		metric = metric[:0]
		for i, v := range m.Labels {
			label = label[:0]
			name = appendName(name[:0], f, d.labels[i])
			label = protowire.AppendTag(label, pbLabelName, protowire.BytesType)
			label = protowire.AppendBytes(label, name)
			label = protowire.AppendTag(label, pbLabelValue, protowire.BytesType)
			name = appendEscaped(name[:0], v, escapeNone)
			label = protowire.AppendBytes(label, name)
			metric = protowire.AppendTag(metric, pbMetricLabel, protowire.BytesType)
			metric = protowire.AppendBytes(metric, label)
		}
		var value [9]byte
		vb := protowire.AppendTag(value[:0], pbValue, protowire.Fixed64Type)
		vb = protowire.AppendFixed64(vb, math.Float64bits(m.Value))
		metric = protowire.AppendTag(metric, valueField, protowire.BytesType)
		metric = protowire.AppendBytes(metric, vb)
		msg = protowire.AppendTag(msg, pbFamilyMetric, protowire.BytesType)
		msg = protowire.AppendBytes(msg, metric)
	}
	return protowire.AppendBytes(b, msg)
}
