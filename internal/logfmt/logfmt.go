// Package logfmt writes ctxtop serve's log lines in the logfmt form that
// log/slog's text handler writes and Prometheus exporters use
// (time=... level=INFO msg="Listening on" address=127.0.0.1:9100), for the
// few lines the exporter logs. It replaces log/slog in the binary, which
// cost some 60 KB for three call sites.
package logfmt

import (
	"fmt"
	"io"
	"log"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Logger writes one line per call; a nil *Logger writes nothing. It is safe
// for concurrent use.
type Logger struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
}

// New is a Logger writing to w.
func New(w io.Writer) *Logger { return &Logger{w: w, now: time.Now} }

// Info logs msg with key-value pairs at level INFO.
func (l *Logger) Info(msg string, kv ...any) { l.log("INFO", msg, kv) }

// Error logs msg with key-value pairs at level ERROR.
func (l *Logger) Error(msg string, kv ...any) { l.log("ERROR", msg, kv) }

// Std is a standard library logger whose lines l writes at level ERROR,
// for http.Server's ErrorLog.
func (l *Logger) Std() *log.Logger { return log.New(errorWriter{l}, "", 0) }

type errorWriter struct{ l *Logger }

func (w errorWriter) Write(p []byte) (int, error) {
	msg := string(p)
	if n := len(msg); n > 0 && msg[n-1] == '\n' {
		msg = msg[:n-1]
	}
	w.l.Error(msg)
	return len(p), nil
}

func (l *Logger) log(level, msg string, kv []any) {
	if l == nil {
		return
	}
	b := make([]byte, 0, 128)
	b = append(b, "time="...)
	b = l.now().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, " level="...)
	b = append(b, level...)
	b = append(b, " msg="...)
	b = appendValue(b, msg)
	for i := 0; i+1 < len(kv); i += 2 {
		b = append(b, ' ')
		b = appendValue(b, fmt.Sprint(kv[i]))
		b = append(b, '=')
		b = appendValue(b, fmt.Sprint(kv[i+1]))
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(b)
}

// appendValue quotes s as slog's text handler does: when it is empty or
// holds a space, '=', '"' or anything unprintable.
func appendValue(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func needsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for _, r := range s {
		if r == ' ' || r == '=' || r == '"' || r == utf8.RuneError || !unicode.IsPrint(r) {
			return true
		}
	}
	return false
}
