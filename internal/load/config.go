package load

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Config says what to run.
type Config struct {
	Mode Mode `json:"mode"`
	// CPUs: nil unpinned; [c] both sides on c; [a, b] ping on a, pong on b.
	// Syscall mode has one side and takes the first. Goroutine mode pins
	// the whole workload process, every thread, to the CPUs given (taskset
	// -c on a Go program), since the Go scheduler places goroutines. Pool
	// and poll modes cannot be pinned (Start fails).
	CPUs []int `json:"cpus,omitempty"`
	// Pairs is the number of independent ping-pong pairs; 0 means 1.
	Pairs int `json:"pairs,omitempty"`
	// Duration and RoundTrips end the run, whichever comes first; both 0
	// runs until Stop. RoundTrips counts over all pairs.
	Duration   time.Duration `json:"duration,omitempty"`
	RoundTrips uint64        `json:"round_trips,omitempty"`
	// WorkingSet is how many bytes of its own memory each side of a futex,
	// pipe or process pair walks every round trip, one touch per cache
	// line (lmbench lat_ctx -s); 0 walks nothing.
	WorkingSet int64 `json:"working_set,omitempty"`
	// Threads is how many threads pool and poll modes run.
	Threads int `json:"threads,omitempty"`
	// Work is one pool work item's CPU time; 0 means DefaultWork.
	Work time.Duration `json:"work,omitempty"`
	// Period is how long a poll thread sleeps between wake-ups; 0 means
	// DefaultPeriod.
	Period time.Duration `json:"period,omitempty"`
	// CPUQuota limits pool mode to this many CPUs' worth of time in a
	// cgroup ctxtop makes and removes (root only); 0 leaves it unlimited.
	CPUQuota float64 `json:"cpu_quota,omitempty"`
	// GoMaxProcs sets the workload process's GOMAXPROCS in goroutine mode;
	// 0 leaves Go's default. Thread modes set what their threads need.
	GoMaxProcs int `json:"gomaxprocs,omitempty"`
}

// Limits on what a run may ask for: past them a run would only thrash the
// machine or exhaust its memory.
const (
	MaxWorkingSet = 1 << 30 // bytes per side
	MaxThreads    = 4096
	MaxPairs      = 1024
	MinWork       = time.Microsecond
	MaxWork       = time.Second
	MinPeriod     = 50 * time.Microsecond
	MaxPeriod     = 10 * time.Second
	// MinCPUQuota is the kernel's smallest CFS quota (1 ms) over its
	// default 100 ms period.
	MinCPUQuota   = 0.01
	MaxCPUQuota   = maxCPU
	DefaultWork   = 100 * time.Microsecond
	DefaultPeriod = 5 * time.Millisecond
)

// normalize fills defaults and checks cfg; every error is one line.
func (cfg *Config) normalize() error {
	info, ok := Lookup(cfg.Mode)
	if !ok {
		_, err := ParseMode(string(cfg.Mode))
		return err
	}
	m := cfg.Mode
	if cfg.Pairs < 0 || cfg.Pairs > MaxPairs {
		return fmt.Errorf("pairs must be 1 to %d, got %d", MaxPairs, cfg.Pairs)
	}
	if cfg.Pairs == 0 {
		cfg.Pairs = 1
	}
	if cfg.Duration < 0 {
		return fmt.Errorf("duration must not be negative, got %v", cfg.Duration)
	}
	if cfg.WorkingSet < 0 || cfg.WorkingSet > MaxWorkingSet {
		return fmt.Errorf("working set must be 0 to %s, got %s", FormatSize(MaxWorkingSet), FormatSize(cfg.WorkingSet))
	}
	if cfg.WorkingSet > 0 && !info.Walks {
		return fmt.Errorf("a working set applies to %s, not %s", ModeList(func(i Info) bool { return i.Walks }), m)
	}
	if info.Threaded {
		if cfg.Threads < 1 || cfg.Threads > MaxThreads {
			return fmt.Errorf("%s mode needs 1 to %d threads, got %d", m, MaxThreads, cfg.Threads)
		}
		if cfg.Pairs != 1 {
			return fmt.Errorf("%s mode runs threads, not pairs", m)
		}
		if len(cfg.CPUs) > 0 {
			return fmt.Errorf("%s mode cannot be pinned: it shows what the scheduler does with its threads", m)
		}
		if cfg.RoundTrips != 0 {
			return fmt.Errorf("%s mode runs for a duration, not a number of round trips", m)
		}
	} else if cfg.Threads != 0 {
		return fmt.Errorf("threads apply to %s, not %s (use pairs)", ModeList(func(i Info) bool { return i.Threaded }), m)
	}
	if cfg.Work != 0 && !info.TakesWork {
		return fmt.Errorf("work applies to %s, not %s", ModeList(func(i Info) bool { return i.TakesWork }), m)
	}
	if info.TakesWork && cfg.Work == 0 {
		cfg.Work = DefaultWork
	}
	if cfg.Work != 0 && (cfg.Work < MinWork || cfg.Work > MaxWork) {
		return fmt.Errorf("work must be %v to %v, got %v", MinWork, MaxWork, cfg.Work)
	}
	if cfg.Period != 0 && !info.TakesPeriod {
		return fmt.Errorf("period applies to %s, not %s", ModeList(func(i Info) bool { return i.TakesPeriod }), m)
	}
	if info.TakesPeriod && cfg.Period == 0 {
		cfg.Period = DefaultPeriod
	}
	if cfg.Period != 0 && (cfg.Period < MinPeriod || cfg.Period > MaxPeriod) {
		return fmt.Errorf("period must be %v to %v, got %v", MinPeriod, MaxPeriod, cfg.Period)
	}
	if cfg.CPUQuota != 0 {
		if !info.TakesCPUQuota {
			return fmt.Errorf("a CPU quota applies to %s, not %s", ModeList(func(i Info) bool { return i.TakesCPUQuota }), m)
		}
		if math.IsNaN(cfg.CPUQuota) || cfg.CPUQuota < MinCPUQuota || cfg.CPUQuota > MaxCPUQuota {
			return fmt.Errorf("CPU quota must be %g to %d CPUs, got %g", MinCPUQuota, MaxCPUQuota, cfg.CPUQuota)
		}
	}
	if cfg.GoMaxProcs < 0 || cfg.GoMaxProcs > MaxThreads {
		return fmt.Errorf("gomaxprocs must be 1 to %d, got %d", MaxThreads, cfg.GoMaxProcs)
	}
	if err := ValidateCPUs(cfg.CPUs); err != nil {
		return err
	}
	cfg.CPUs = append([]int(nil), cfg.CPUs...)
	return nil
}

// ErrSize is wrapped by every size syntax error.
var ErrSize = errors.New("bad size")

// ParseSize reads a byte count: digits with an optional binary suffix K, M
// or G (also KB, KiB, ...), as lmbench and dd take them: "0", "4096",
// "64K", "8M".
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
		if shift > 0 {
			t = t[:n-1]
		}
	}
	if t == "" || len(t) > 12 || strings.TrimLeft(t, "0123456789") != "" {
		return 0, fmt.Errorf("%w: %q (want bytes, or a number with K, M or G: 64K)", ErrSize, s)
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%w: %q", ErrSize, s)
	}
	return n << shift, nil
}

// FormatSize writes n bytes the way ParseSize reads them, in the largest
// unit that divides it.
func FormatSize(n int64) string {
	for _, u := range []struct {
		shift  uint
		suffix string
	}{{40, "T"}, {30, "G"}, {20, "M"}, {10, "K"}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
