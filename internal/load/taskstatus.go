package load

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrParse is wrapped by errors about a kernel file that does not parse.
var ErrParse = errors.New("parse error")

// Counters are one thread's kernel scheduler counters.
type Counters struct {
	Voluntary   uint64 // voluntary_ctxt_switches: the thread blocked
	Involuntary uint64 // nonvoluntary_ctxt_switches: it was preempted
	Migrations  uint64 // se.nr_migrations from sched; valid when HasMigrations
	// HasMigrations is false when the kernel has no /proc/.../sched (built
	// without CONFIG_SCHED_DEBUG) or the file lacks the field.
	HasMigrations bool
}

// ReadCounters reads the counters of thread tid of process pid under root
// (normally "/proc"): /proc/PID/task/TID/status for the switch counts and
// /proc/PID/task/TID/sched for migrations.
func ReadCounters(root string, pid, tid int) (Counters, error) {
	dir := root + "/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid)
	b, err := os.ReadFile(dir + "/status")
	if err != nil {
		return Counters{}, err
	}
	c, err := parseStatusSwitches(b)
	if err != nil {
		return Counters{}, fmt.Errorf("%w: %s/status", err, dir)
	}
	if s, err := os.ReadFile(dir + "/sched"); err == nil {
		c.Migrations, c.HasMigrations = parseSchedMigrations(s)
	}
	return c, nil
}

// readSelfCounters reads the calling thread's own counters, which stay
// readable for as long as the thread runs.
func readSelfCounters() (Counters, error) {
	return ReadCounters("/proc", os.Getpid(), gettid())
}

// parseStatusSwitches takes the two switch counters out of a status file.
func parseStatusSwitches(b []byte) (Counters, error) {
	var c Counters
	var seen int
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "voluntary_ctxt_switches":
			dst = &c.Voluntary
		case "nonvoluntary_ctxt_switches":
			dst = &c.Involuntary
		default:
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
		if err != nil {
			return Counters{}, fmt.Errorf("%w: %q", ErrParse, line)
		}
		*dst = n
		seen++
	}
	if seen != 2 {
		return Counters{}, fmt.Errorf("%w: switch counters missing", ErrParse)
	}
	return c, nil
}

// parseSchedMigrations finds "se.nr_migrations : N" in a sched file.
func parseSchedMigrations(b []byte) (uint64, bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok || string(bytes.TrimSpace(key)) != "se.nr_migrations" {
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// sub is the change from c0 to c; migrations stay known only if both were.
func (c Counters) sub(c0 Counters) Counters {
	return Counters{
		Voluntary:     c.Voluntary - c0.Voluntary,
		Involuntary:   c.Involuntary - c0.Involuntary,
		Migrations:    c.Migrations - c0.Migrations,
		HasMigrations: c.HasMigrations && c0.HasMigrations,
	}
}

func (c Counters) add(d Counters) Counters {
	return Counters{
		Voluntary:     c.Voluntary + d.Voluntary,
		Involuntary:   c.Involuntary + d.Involuntary,
		Migrations:    c.Migrations + d.Migrations,
		HasMigrations: c.HasMigrations && d.HasMigrations,
	}
}
