package load

// ModeGoroutine: two goroutines over unbuffered channels; the Go
// scheduler hands off without a kernel context switch.
const ModeGoroutine Mode = "goroutine"

func goroutineInfo() Info {
	return Info{
		Mode:  ModeGoroutine,
		Title: "two goroutines over channels: no kernel switch",
		Help: "two goroutines over unbuffered channels: the hand-off never enters the kernel, " +
			"but the Go runtime's own threads still switch (a goroutine made runnable wakes an " +
			"idle P's thread to look for work; it finds none and parks again in futex). Those " +
			"are counted over every thread of the process and shown as switches/s.",
		NoSwitch: true, Goroutines: true, MaxCPUs: 2, Bench: true,
		Unit:  roundTrip(),
		count: roundTrips,
		note: "(switches: every thread of the workload process, the Go runtime's own;\n" +
			" the hand-offs themselves never enter the kernel)",
		prepare: func(Config) unitMaker {
			return func(p *pair) (pairImpl, error) { return newGoroutinePair(p), nil }
		},
	}
}

// goroutinePair hands a token between two goroutines over unbuffered
// channels: the Go scheduler switches goroutines without entering the
// kernel when both sit on one P.
type goroutinePair struct {
	p        *pair
	ping     chan struct{}
	pong     chan struct{}
	finished chan struct{}
}

func newGoroutinePair(p *pair) *goroutinePair {
	return &goroutinePair{p: p, ping: make(chan struct{}), pong: make(chan struct{}), finished: make(chan struct{})}
}

func (g *goroutinePair) sides() []sideSpec { return nil }

// run plays ping and starts pong; closing ping's channel ends pong.
func (g *goroutinePair) run(p *pair, gate <-chan struct{}) {
	<-gate
	go func() {
		for range g.ping {
			g.pong <- struct{}{}
		}
		close(g.finished)
	}()
	defer func() {
		close(g.ping)
		<-g.finished
	}()
	for !p.stop.Load() {
		g.ping <- struct{}{}
		<-g.pong
		if n := p.count.Add(1); n == p.quota {
			return
		}
	}
}

// Neither side ever blocks for longer than the other takes to answer.
func (g *goroutinePair) wake()  {}
func (g *goroutinePair) force() {}
func (g *goroutinePair) close() {}
