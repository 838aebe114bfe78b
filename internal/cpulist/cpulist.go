// Package cpulist reads and writes the kernel's CPU list syntax ("0-2,5"),
// as taskset -c, cpusets and Cpus_allowed_list use it. It depends on
// nothing, so the monitor's affinity key and the load generator share it
// without the one pulling in the other.
package cpulist

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Max bounds CPU numbers so that "0-999999999" fails fast instead of
// allocating; it is the size of the kernel's default cpumask for
// sched_setaffinity in x/sys (CPU_SETSIZE).
const Max = 1024

// ErrSyntax is wrapped by every CPU-list syntax error.
var ErrSyntax = errors.New("bad CPU list")

// Parse parses the kernel's list syntax ("0", "0,1", "0-1", "0,2-3")
// and keeps the order given (the load generator reads [a, b] as ping on a,
// pong on b). It checks syntax only, not the CPUs against this machine.
func Parse(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty", ErrSyntax)
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", ErrSyntax, s)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil || b < a {
				return nil, fmt.Errorf("%w: %q", ErrSyntax, s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
			if len(cpus) > Max {
				return nil, fmt.Errorf("%w: %q: too many CPUs", ErrSyntax, s)
			}
		}
	}
	return cpus, nil
}

func parseCPU(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, ErrSyntax
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, ErrSyntax
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= Max {
		return 0, ErrSyntax
	}
	return n, nil
}

// Format writes a list back in the kernel's syntax, ranges collapsed.
func Format(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}
