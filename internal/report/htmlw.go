package report

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/ctxtop/ctxtop/internal/format"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// htmlWriter writes a page. Every string from a recording (thread, process
// and cgroup names, frames, host facts) reaches the page through text or
// f, which escape it; raw is for the page's own markup only. That one
// rule, rather than a template engine, keeps a thread named <script> a
// name: html/template would cost the binary over 100 KB.
type htmlWriter struct {
	w   *bufio.Writer
	err error
}

func newHTMLWriter(w io.Writer) *htmlWriter { return &htmlWriter{w: bufio.NewWriterSize(w, 64<<10)} }

// raw writes the page's own markup.
func (h *htmlWriter) raw(s string) {
	if h.err == nil {
		_, h.err = h.w.WriteString(s)
	}
}

// text writes s escaped: untrusted text.
func (h *htmlWriter) text(s string) { h.raw(html.EscapeString(sanitize.Name(s))) }

// f is fmt.Fprintf with every string and Stringer argument escaped; the
// format itself is the page's own markup.
func (h *htmlWriter) f(format string, args ...any) {
	for i, a := range args {
		switch v := a.(type) {
		case string:
			args[i] = html.EscapeString(sanitize.Name(v))
		case fmt.Stringer:
			args[i] = html.EscapeString(sanitize.Name(v.String()))
		case trusted:
			args[i] = string(v)
		}
	}
	h.raw(fmt.Sprintf(format, args...))
}

// trusted is markup this package built (escaped already), passed to f.
type trusted string

func (h *htmlWriter) flush() error {
	if h.err != nil {
		return h.err
	}
	return h.w.Flush()
}

// rate is a rate as every view prints it, "-" when unknown.
func rate(v float64) string { return format.Thousands(v) }

// pct is a percentage with one decimal, "-" when unknown.
func pct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "%"
}

// micros is a latency in µs, "-" when unknown.
func micros(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	if v >= 100 {
		return format.Thousands(v) + " µs"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " µs"
}

// times is a ratio with the digits that mean something: 3.6×, 80×.
func times(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "from 0"
	case math.IsNaN(r):
		return "-"
	case r >= 10:
		return format.Thousands(r) + "×"
	}
	return strconv.FormatFloat(r, 'f', 1, 64) + "×"
}

// dur is a duration rounded to what a reader needs.
func dur(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}
