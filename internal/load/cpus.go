package load

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxCPU bounds CPU numbers so that "0-999999999" fails fast instead of
// allocating; it is the size of the kernel's default cpumask for
// sched_setaffinity in x/sys (CPU_SETSIZE).
const maxCPU = 1024

// ErrCPUList is wrapped by every CPU-list syntax error.
var ErrCPUList = errors.New("bad CPU list")

// ParseCPUList parses the kernel's list syntax ("0", "0,1", "0-1", "0,2-3")
// and keeps the order given, since [a, b] means ping on a, pong on b. It
// checks syntax only; ValidateCPUs checks the CPUs against this machine.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty", ErrCPUList)
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", ErrCPUList, s)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil || b < a {
				return nil, fmt.Errorf("%w: %q", ErrCPUList, s)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
			if len(cpus) > maxCPU {
				return nil, fmt.Errorf("%w: %q: too many CPUs", ErrCPUList, s)
			}
		}
	}
	return cpus, nil
}

func parseCPU(s string) (int, error) {
	if s == "" || len(s) > 5 {
		return 0, ErrCPUList
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, ErrCPUList
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= maxCPU {
		return 0, ErrCPUList
	}
	return n, nil
}

// AllowedCPUs are the CPUs this process may run on (sched_getaffinity), in
// ascending order.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; c < maxCPU; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// onlineCPUs reads the kernel's online list; nil when sysfs is not there,
// in which case the affinity mask (which never holds offline CPUs for long)
// is the only check.
func onlineCPUs() []int {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return nil
	}
	cpus, err := ParseCPUList(string(b))
	if err != nil {
		return nil
	}
	return cpus
}

// ValidateCPUs checks a pinning: one or two CPUs, each online and in this
// process's allowed set. The error is one line, fit for the command line.
func ValidateCPUs(cpus []int) error {
	if len(cpus) > 2 {
		return fmt.Errorf("cpus: give one CPU (both sides on it) or two (one side on each), got %d", len(cpus))
	}
	allowed, err := AllowedCPUs()
	if err != nil {
		return err
	}
	online := onlineCPUs()
	for _, c := range cpus {
		if online != nil && !contains(online, c) {
			return fmt.Errorf("cpus: CPU %d is not online (online: %s)", c, FormatCPUs(online))
		}
		if !contains(allowed, c) {
			return fmt.Errorf("cpus: CPU %d is not in this process's allowed set (%s)", c, FormatCPUs(allowed))
		}
	}
	return nil
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// FormatCPUs writes a list back in the kernel's syntax, ranges collapsed.
func FormatCPUs(cpus []int) string {
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

// pinSelf pins the calling OS thread (it must be locked) to cpu.
func pinSelf(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity to CPU %d: %w", cpu, err)
	}
	return nil
}

// sideCPU is where side 0 (ping) or 1 (pong) runs; -1 unpinned.
func sideCPU(cpus []int, side int) int {
	switch len(cpus) {
	case 0:
		return -1
	case 1:
		return cpus[0]
	}
	return cpus[side]
}
