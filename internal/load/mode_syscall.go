package load

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// ModeSyscall: one thread calling getppid in a loop: a mode switch, no
// context switch; the baseline.
const ModeSyscall Mode = "syscall"

func syscallInfo() Info {
	return Info{
		Mode:     ModeSyscall,
		Title:    "one thread calling getppid: no context switch",
		Help:     "one thread calling getppid: a mode switch, no context switch",
		NoSwitch: true, MaxCPUs: 1, Bench: true,
		Unit: roundTrip(), count: roundTrips, threadsPerUnit: 1,
		prepare: func(cfg Config) unitMaker {
			return func(p *pair) (pairImpl, error) { return newSyscallPair(cfg, p), nil }
		},
	}
}

// syscallPair is one thread calling getppid(2) in a loop: it enters and
// leaves the kernel (a mode switch) but never blocks, so the kernel should
// count next to no context switches. Its "round trip" is one system call.
type syscallPair struct {
	p    *pair
	cpus []int
}

func newSyscallPair(cfg Config, p *pair) *syscallPair { return &syscallPair{p: p, cpus: cfg.CPUs} }

func (s *syscallPair) sides() []sideSpec {
	return []sideSpec{{name: threadName("ping", ModeSyscall), cpu: sideCPU(s.cpus, 0), body: s.loop}}
}

// batch keeps the shared counter's atomic add out of what is measured;
// 256 calls take well under a millisecond, so stopping stays prompt.
const batch = 256

func (s *syscallPair) loop() {
	for !s.p.stop.Load() {
		k := uint64(batch)
		if s.p.quota > 0 {
			k = min(k, s.p.quota-s.p.count.Load())
		}
		for range k {
			syscall.RawSyscall(unix.SYS_GETPPID, 0, 0, 0)
		}
		if n := s.p.count.Add(k); s.p.quota > 0 && n >= s.p.quota {
			return
		}
	}
}

func (s *syscallPair) wake()  {}
func (s *syscallPair) force() {}
func (s *syscallPair) close() {}
