package load

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/cpulist"
)

// maxCPU bounds CPU numbers (cpulist.Max).
const maxCPU = cpulist.Max

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
	cpus, err := cpulist.Parse(string(b))
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
			return fmt.Errorf("cpus: CPU %d is not online (online: %s)", c, cpulist.Format(online))
		}
		if !contains(allowed, c) {
			return fmt.Errorf("cpus: CPU %d is not in this process's allowed set (%s)", c, cpulist.Format(allowed))
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
