package logfmt

import (
	"bytes"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The lines are slog's text handler's, but for the time's digits.
func TestLinesAsSlogWritesThem(t *testing.T) {
	at := time.Date(2026, 11, 27, 18, 40, 1, 234_000_000, time.UTC)
	var ours, theirs bytes.Buffer
	l := New(&ours)
	l.now = func() time.Time { return at }
	s := slog.New(slog.NewTextHandler(&theirs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			a.Value = slog.TimeValue(at)
		}
		return a
	}}))
	l.Info("Listening on", "address", "127.0.0.1:10230", "tls", false)
	s.Info("Listening on", "address", "127.0.0.1:10230", "tls", false)
	l.Error("Unable to parse configuration", "err", `yaml: line 3: key "x=y" unknown`)
	s.Error("Unable to parse configuration", "err", `yaml: line 3: key "x=y" unknown`)
	l.Error("tab\there", "empty", "")
	s.Error("tab\there", "empty", "")
	l.Std().Printf("http: TLS handshake error from 127.0.0.1:4242: EOF")
	slog.NewLogLogger(s.Handler(), slog.LevelError).Printf("http: TLS handshake error from 127.0.0.1:4242: EOF")
	// slog writes the time at its own precision; compare the rest.
	norm := regexp.MustCompile(`^time=\S+ `)
	lines := func(b bytes.Buffer) []string {
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			out = append(out, norm.ReplaceAllString(line, ""))
		}
		return out
	}
	if d := cmp.Diff(lines(theirs), lines(ours)); d != "" {
		t.Errorf("lines (-slog +ours):\n%s", d)
	}
	if !strings.HasPrefix(ours.String(), "time=2026-11-27T18:40:01.234Z level=INFO") {
		t.Errorf("time: %q", ours.String())
	}
}

func TestNilLoggerWritesNothing(t *testing.T) {
	var l *Logger
	l.Info("x")
	l.Error("y", "k", 1)
}
