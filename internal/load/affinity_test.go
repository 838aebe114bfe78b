package load

import "golang.org/x/sys/unix"

type cpuSet unix.CPUSet

func (s *cpuSet) of(tid int) error { return unix.SchedGetaffinity(tid, (*unix.CPUSet)(s)) }

func (s *cpuSet) list() []int {
	var out []int
	for c := 0; c < maxCPU; c++ {
		if (*unix.CPUSet)(s).IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}
