package exposition

import (
	"slices"
	"strconv"
	"strings"

	"github.com/ctxtop/ctxtop/internal/sorts"
)

// Format is a negotiated exposition format: what to write and the
// Content-Type that says so.
type Format struct {
	kind     uint8
	version  string // of OpenMetrics: 1.0.0 or 0.0.1
	escaping string // as asked, else underscores
}

const (
	kindText uint8 = iota
	kindOpenMetrics
	kindProto
)

// Escaping schemes a scraper may ask for (escaping= in Accept). The names
// here are all legacy names, which every scheme but dots leaves alone.
const (
	escapeUnderscores = "underscores"
	escapeDots        = "dots"
)

var escapings = []string{"allow-utf-8", escapeUnderscores, escapeDots, "values"}

// Text is the Prometheus text format, version 0.0.4: what a scraper gets
// when it asks for nothing this package writes.
var Text = Format{kind: kindText, escaping: escapeUnderscores}

// OpenMetrics is OpenMetrics 1.0.0 text.
var OpenMetrics = Format{kind: kindOpenMetrics, version: "1.0.0", escaping: escapeUnderscores}

// Proto is delimited protobuf io.prometheus.client.MetricFamily messages.
var Proto = Format{kind: kindProto, escaping: escapeUnderscores}

// ContentType is the response's Content-Type, as client_golang sends it.
func (f Format) ContentType() string {
	var s string
	switch f.kind {
	case kindOpenMetrics:
		s = "application/openmetrics-text; version=" + f.version + "; charset=utf-8"
	case kindProto:
		s = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
	default:
		s = "text/plain; version=0.0.4; charset=utf-8"
	}
	return s + "; escaping=" + f.escaping
}

// offer is a format this package writes, as an Accept clause would name it.
type offer struct {
	typ, subtype string
	params       map[string]string // that must match; version defaults as below
	f            Format
}

// offers in order of preference, as client_golang's handler with
// OpenMetrics enabled prefers them (less the protobuf text formats, which
// are for debugging).
var offers = []offer{
	{"application", "openmetrics-text", map[string]string{"version": "1.0.0"}, Format{kind: kindOpenMetrics, version: "1.0.0"}},
	{"application", "openmetrics-text", map[string]string{"version": "0.0.1"}, Format{kind: kindOpenMetrics, version: "0.0.1"}},
	{"application", "vnd.google.protobuf", map[string]string{"proto": "io.prometheus.client.MetricFamily", "encoding": "delimited"}, Format{kind: kindProto}},
	{"text", "plain", map[string]string{"version": "0.0.4"}, Format{kind: kindText}},
}

// clause is one media range of an Accept header.
type clause struct {
	typ, subtype string
	q            float64
	params       map[string]string
}

// parseAccept splits an Accept header into its media ranges, highest q
// first, and at equal q a named type before a wildcard (stable, so ranges
// otherwise alike keep the header's order). A range "*" is "*/*"; one
// without a slash, or with two, is left out.
func parseAccept(header string) []clause {
	var cs []clause
	for part := range strings.SplitSeq(header, ",") {
		fields := strings.Split(part, ";")
		mt := strings.TrimSpace(fields[0])
		typ, sub, ok := strings.Cut(mt, "/")
		if !ok || strings.Contains(sub, "/") {
			if mt != "*" {
				continue
			}
			typ, sub = "*", "*"
		}
		c := clause{typ: strings.TrimSpace(typ), subtype: strings.TrimSpace(sub), q: 1, params: map[string]string{}}
		for _, p := range fields[1:] {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				continue
			}
			k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`)
			if k == "q" {
				c.q, _ = strconv.ParseFloat(v, 64) // junk is 0, as in goautoneg
				continue
			}
			c.params[k] = v
		}
		cs = append(cs, c)
	}
	sorts.StableFunc(cs, func(a, b clause) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return wild(a) - wild(b)
	})
	return cs
}

// wild ranks a clause's wildcards: 0 for type/subtype, 1 for type/*, 2 for */*.
func wild(c clause) int {
	n := 0
	if c.typ == "*" {
		n++
	}
	if c.subtype == "*" {
		n++
	}
	return n
}

func (o offer) matches(c clause) bool {
	if c.typ != "*" && c.typ != o.typ || c.subtype != "*" && c.subtype != o.subtype {
		return false
	}
	for k, want := range o.params {
		got := c.params[k]
		if k == "version" && got == "" {
			switch {
			case c.typ == "application" && c.subtype == "openmetrics-text":
				got = "0.0.1"
			case c.typ == "text" && c.subtype == "plain":
				got = "0.0.4"
			}
		}
		if got != want {
			return false
		}
	}
	return true
}

// Negotiate picks the format for an Accept header as expfmt.NegotiateAccept
// does: the first offer that matches the highest-q clause that any offer
// matches, with the escaping that clause asks for; else the text format.
// A clause with q=0 still matches, as in expfmt.
func Negotiate(accept string) Format {
	for _, c := range parseAccept(accept) {
		for _, o := range offers {
			if o.matches(c) {
				f := o.f
				f.escaping = escapeUnderscores
				if e := c.params["escaping"]; slices.Contains(escapings, e) {
					f.escaping = e
				}
				return f
			}
		}
	}
	return Text
}
