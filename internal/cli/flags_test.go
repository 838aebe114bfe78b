package cli

import (
	"strings"
	"testing"
	"time"
)

func TestVersionLineNamesCommitOnce(t *testing.T) {
	for _, c := range []struct{ version, commit string }{
		{"e6bacff", "e6bacff"},
		{"e6bacff-dirty", "e6bacff"},
		{"v1.2.0-3-ge6bacff", "e6bacff"},
		{"v1.2.0", "e6bacff"},
	} {
		got := versionLine(c.version, c.commit, "go1.26")
		if n := strings.Count(got, c.commit); n != 1 {
			t.Errorf("versionLine(%q, %q) = %q: commit %d times, want once", c.version, c.commit, got, n)
		}
		if !strings.Contains(got, c.version) || !strings.Contains(got, "go1.26") {
			t.Errorf("versionLine(%q, %q) = %q: want the version and Go's", c.version, c.commit, got)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"2": 2 * time.Second, "0.5": 500 * time.Millisecond, "500ms": 500 * time.Millisecond, "0": 0, "1m": time.Minute,
	} {
		got, err := parseDuration(in)
		if err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "-1", "-1s", "NaN", "1e300", "99999999h"} {
		if got, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) = %v, want an error", in, got)
		}
	}
}
