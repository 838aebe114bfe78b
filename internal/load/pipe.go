package load

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ModePipe: two OS threads over a pair of pipes (perf bench sched pipe -T).
const ModePipe Mode = "pipe"

func pipeInfo() Info {
	return Info{
		Mode:    ModePipe,
		Title:   "two threads passing a byte over pipes",
		Help:    "two OS threads over a pair of pipes (perf bench sched pipe -T)",
		MaxCPUs: 2, Walks: true, Bench: true,
		Unit: roundTrip(), count: roundTrips, threadsPerUnit: 2,
		prepare: func(cfg Config) unitMaker {
			return func(p *pair) (pairImpl, error) { return newPipePair(cfg, p) }
		},
	}
}

// pipePair is perf bench sched pipe -T: two threads passing a byte back
// and forth over two pipes, blocking in read(2) on plain blocking fds.
type pipePair struct {
	p    *pair
	cpus []int
	sideSets
	// toPong carries ping's byte, toPing the answer; [0] read, [1] write.
	toPong, toPing [2]int
}

func newPipePair(cfg Config, p *pair) (*pipePair, error) {
	pp := &pipePair{p: p, cpus: cfg.CPUs, sideSets: sideSets{size: cfg.WorkingSet}, toPong: [2]int{-1, -1}, toPing: [2]int{-1, -1}}
	if err := unix.Pipe2(pp.toPong[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	if err := unix.Pipe2(pp.toPing[:], unix.O_CLOEXEC); err != nil {
		pp.close()
		return nil, fmt.Errorf("pipe: %w", err)
	}
	return pp, nil
}

func (pp *pipePair) sides() []sideSpec {
	return []sideSpec{
		{name: threadName("ping", ModePipe), cpu: sideCPU(pp.cpus, 0), setup: pp.setupSide(0), body: pp.ping},
		{name: threadName("pong", ModePipe), cpu: sideCPU(pp.cpus, 1), setup: pp.setupSide(1), body: pp.pong},
	}
}

func (pp *pipePair) ping() {
	defer pp.wake()
	var b [1]byte
	for !pp.p.stop.Load() {
		pp.ws[0].walk()
		if writeByte(pp.toPong[1], &b) != nil {
			return
		}
		if n, err := readByte(pp.toPing[0], &b); n != 1 || err != nil || pp.p.stop.Load() {
			return
		}
		if n := pp.p.count.Add(1); n == pp.p.quota {
			return
		}
	}
}

func (pp *pipePair) pong() {
	var b [1]byte
	for {
		if n, err := readByte(pp.toPong[0], &b); n != 1 || err != nil || pp.p.stop.Load() {
			return
		}
		pp.ws[1].walk()
		if writeByte(pp.toPing[1], &b) != nil {
			return
		}
	}
}

// wake writes a byte to each pipe: a side blocked in read gets it, sees
// the stop flag and returns. The pipes hold 64 KiB, so this never blocks.
func (pp *pipePair) wake() {
	pp.p.stop.Store(true)
	var b [1]byte
	for _, fd := range []int{pp.toPong[1], pp.toPing[1]} {
		if fd >= 0 {
			unix.Write(fd, b[:])
		}
	}
}

func (pp *pipePair) force() { pp.wake() }

func (pp *pipePair) close() {
	for _, fd := range []*int{&pp.toPong[0], &pp.toPong[1], &pp.toPing[0], &pp.toPing[1]} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}
