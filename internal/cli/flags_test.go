package cli

import (
	"strings"
	"testing"
	"time"
)

func TestVersionLineNamesCommitOnce(t *testing.T) {
	for _, c := range []struct{ version, commit, want string }{
		{"e6bacff", "e6bacff", "ctxtop commit e6bacff (go1.26)"},
		{"e6bacff-dirty", "e6bacff", "ctxtop commit e6bacff-dirty (go1.26)"},
		{"v1.2.0-3-ge6bacff", "e6bacff", "ctxtop v1.2.0-3-ge6bacff (go1.26)"},
		{"v1.2.0", "e6bacff", "ctxtop v1.2.0 (commit e6bacff, go1.26)"},
		{"dev", "unknown", "ctxtop dev (commit unknown, go1.26)"},
	} {
		if got := versionLine(c.version, c.commit, "go1.26"); got != c.want {
			t.Errorf("versionLine(%q, %q) = %q, want %q", c.version, c.commit, got, c.want)
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

func TestSizeValue(t *testing.T) {
	for in, want := range map[string]sizeValue{
		"1536": 1536, "3KB": 3 << 10, "512k": 512 << 10, "20MB": 20 << 20, "1GiB": 1 << 30,
	} {
		var v sizeValue
		if err := v.Set(in); err != nil || v != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, v, err, want)
		}
	}
	for _, in := range []string{"", "0", "0K", "-1", "x", "MB", "1e9", "99999999999999G"} {
		var v sizeValue
		if err := v.Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, v)
		}
	}
	// 0 is a size, only not a cap: say so, not "not a size".
	var v sizeValue
	if err := v.Set("0"); err == nil || !strings.Contains(err.Error(), "0 is no cap") {
		t.Errorf("Set(\"0\") = %v, want it to say 0 is no cap", err)
	}
}

// TestRecordTimeFlags: record's --duration and --flush take what -d takes.
func TestRecordTimeFlags(t *testing.T) {
	for _, c := range []struct{ args, want []string }{
		{[]string{"--duration", "60", "--flush", "2"}, []string{"1m0s", "2s"}},
		{[]string{"--duration", "1.5", "--flush", "500ms"}, []string{"1.5s", "500ms"}},
		{nil, []string{"0", "5s"}},
	} {
		cmd := newRecordCmd()
		if err := cmd.ParseFlags(c.args); err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		got := []string{cmd.Flags().Lookup("duration").Value.String(), cmd.Flags().Lookup("flush").Value.String()}
		if got[0] != c.want[0] || got[1] != c.want[1] {
			t.Errorf("%v: --duration %s --flush %s, want %s and %s", c.args, got[0], got[1], c.want[0], c.want[1])
		}
	}
	for _, args := range [][]string{{"--duration", "-1"}, {"--flush", "soon"}} {
		if err := newRecordCmd().ParseFlags(args); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestPlannedPasses: a run that stays (the monitor, -b until interrupted,
// record without --duration) says 0, so the task walk's skipping program
// loads at its start; a counted one says how many passes it makes, the
// baseline included, so that a short one never pays for it.
func TestPlannedPasses(t *testing.T) {
	for _, c := range []struct {
		batch      bool
		iterations int
		want       int
	}{{false, 0, 0}, {false, 5, 0}, {true, 0, 0}, {true, 2, 3}, {true, 100, 101}} {
		if got := plannedPasses(c.batch, c.iterations); got != c.want {
			t.Errorf("plannedPasses(%v, %d) = %d, want %d", c.batch, c.iterations, got, c.want)
		}
	}
	for _, c := range []struct {
		d, interval time.Duration
		want        int
	}{{0, time.Second, 0}, {2 * time.Second, time.Second, 3}, {4 * time.Second, 500 * time.Millisecond, 9}, {time.Hour, 0, 0}, {24 * 365 * time.Hour, time.Millisecond, 1<<20 + 1}} {
		if got := durationPasses(c.d, c.interval); got != c.want {
			t.Errorf("durationPasses(%v, %v) = %d, want %d", c.d, c.interval, got, c.want)
		}
	}
}
