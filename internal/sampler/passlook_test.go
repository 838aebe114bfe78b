package sampler

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// passLook is what the process, the Go runtime and the host did over one
// pass (the difference of two looks, one either side of it), to tell what
// a dear pass was.
type passLook struct {
	user, sys                     time.Duration // the process's, getrusage
	minflt, majflt, nvcsw, nivcsw int64         // the process's
	cpu0, cpu1                    int           // the CPU the pass began and ended on
	// irqs and softirqs counted on those CPUs (/proc/interrupts,
	// /proc/softirqs), kinds them by kind, the most first.
	irqs, softirqs uint64
	kinds          string
	steal, irq     int64 // the host's, /proc/stat, in USER_HZ ticks
	gcs            uint64
	released       int64   // change in the heap bytes released to the OS
	scavenge       float64 // the runtime's scavenger CPU, s (its estimate)
	scheds         uint64  // goroutines scheduled (/sched/latencies count)
	allocs         uint64  // bytes the pass allocated on the heap
	// others is the run time of the process's other threads in the pass.
	others time.Duration
}

var lookMetrics = []string{
	"/gc/cycles/total:gc-cycles",
	"/memory/classes/heap/released:bytes",
	"/cpu/classes/scavenge/total:cpu-seconds",
	"/sched/latencies:seconds",
	"/gc/heap/allocs:bytes",
}

// passLooker takes looks by raw system calls on files it keeps open: a
// call announced to the Go scheduler just before a pass would wake sysmon
// into the pass, the very noise being looked for.
type passLooker struct {
	ms                    []metrics.Sample
	buf                   []byte
	ncpu                  int
	irqFD, softFD, statFD int
	threadFDs             map[int]int // schedstat by TID, the threads of the process at the start
}

func newPassLooker(tb testing.TB) *passLooker {
	tb.Helper()
	l := &passLooker{buf: make([]byte, 1<<16), threadFDs: map[int]int{}}
	for _, n := range lookMetrics {
		l.ms = append(l.ms, metrics.Sample{Name: n})
	}
	open := func(path string) int {
		fd, err := openFile(unix.AT_FDCWD, []byte(path+"\x00"))
		if err != nil {
			tb.Fatal(err)
		}
		return fd
	}
	l.irqFD, l.softFD, l.statFD = open("/proc/interrupts"), open("/proc/softirqs"), open("/proc/stat")
	l.ncpu = max(bytes.Count(l.read(l.statFD), []byte("\ncpu")), 1)
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		tb.Fatal(err)
	}
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			l.threadFDs[tid] = open("/proc/self/task/" + e.Name() + "/schedstat")
		}
	}
	tb.Cleanup(func() {
		for _, fd := range append(slices.Collect(maps.Values(l.threadFDs)), l.irqFD, l.softFD, l.statFD) {
			closeFD(fd)
		}
	})
	return l
}

func (l *passLooker) read(fd int) []byte {
	n, err := preadRaw(fd, l.buf)
	if err != nil {
		return nil
	}
	return l.buf[:n]
}

// rawLook is one side of a passLook.
type rawLook struct {
	self           unix.Rusage
	cpu            int
	irqs, softirqs map[string][]uint64
	steal, irq     int64
	ms             []metrics.Sample
	threads        map[int]time.Duration
}

func (l *passLooker) look() rawLook {
	var r rawLook
	r.irqs = l.perCPU(l.irqFD)
	r.softirqs = l.perCPU(l.softFD)
	r.steal, r.irq = l.stat()
	r.threads = map[int]time.Duration{}
	for tid, fd := range l.threadFDs {
		f, _, _ := bytes.Cut(l.read(fd), []byte(" "))
		if ns, err := strconv.ParseInt(string(f), 10, 64); err == nil {
			r.threads[tid] = time.Duration(ns)
		}
	}
	metrics.Read(l.ms)
	r.ms = slices.Clone(l.ms)
	_ = unix.Getrusage(unix.RUSAGE_SELF, &r.self)
	r.cpu = -1
	if c, err := getcpu(); err == nil {
		r.cpu = c
	}
	return r
}

// perCPU reads /proc/interrupts or /proc/softirqs: each row's per-CPU
// counts by its name.
func (l *passLooker) perCPU(fd int) map[string][]uint64 {
	rows := map[string][]uint64{}
	for i, line := range bytes.Split(l.read(fd), []byte("\n")) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if i == 0 || !ok {
			continue
		}
		fields := bytes.Fields(rest)
		key := strings.TrimSpace(string(name))
		if k := len(fields); k > l.ncpu+1 {
			key += " " + string(fields[k-1])
		}
		row := make([]uint64, l.ncpu)
		for c, f := range fields[:min(len(fields), l.ncpu)] {
			n, err := strconv.ParseUint(string(f), 10, 64)
			if err != nil {
				break
			}
			row[c] = n
		}
		rows[key] = row
	}
	return rows
}

// stat returns the host's steal and irq+softirq time, the first line of
// /proc/stat.
func (l *passLooker) stat() (steal, irq int64) {
	line, _, _ := bytes.Cut(l.read(l.statFD), []byte("\n"))
	f := strings.Fields(string(line))
	n := func(i int) int64 {
		if i >= len(f) {
			return 0
		}
		v, _ := strconv.ParseInt(f[i], 10, 64)
		return v
	}
	return n(8), n(6) + n(7)
}

// diff is what happened between a and b, self being the thread that made
// the pass.
func (l *passLooker) diff(a, b rawLook, self int) passLook {
	tv := func(t unix.Timeval) time.Duration { return time.Duration(t.Nano()) }
	p := passLook{
		user:     tv(b.self.Utime) - tv(a.self.Utime),
		sys:      tv(b.self.Stime) - tv(a.self.Stime),
		minflt:   b.self.Minflt - a.self.Minflt,
		majflt:   b.self.Majflt - a.self.Majflt,
		nvcsw:    b.self.Nvcsw - a.self.Nvcsw,
		nivcsw:   b.self.Nivcsw - a.self.Nivcsw,
		cpu0:     a.cpu,
		cpu1:     b.cpu,
		steal:    b.steal - a.steal,
		irq:      b.irq - a.irq,
		gcs:      b.ms[0].Value.Uint64() - a.ms[0].Value.Uint64(),
		released: int64(b.ms[1].Value.Uint64()) - int64(a.ms[1].Value.Uint64()),
		scavenge: b.ms[2].Value.Float64() - a.ms[2].Value.Float64(),
		scheds:   histCount(b.ms[3]) - histCount(a.ms[3]),
		allocs:   b.ms[4].Value.Uint64() - a.ms[4].Value.Uint64(),
	}
	for tid, d := range b.threads {
		if tid != self {
			p.others += d - a.threads[tid]
		}
	}
	cpus := []int{a.cpu}
	if b.cpu != a.cpu {
		cpus = append(cpus, b.cpu)
	}
	var kinds, soft map[string]uint64
	p.irqs, kinds = onCPUs(a.irqs, b.irqs, cpus)
	p.softirqs, soft = onCPUs(a.softirqs, b.softirqs, cpus)
	for k, v := range soft {
		kinds["soft "+k] = v
	}
	names := slices.Collect(maps.Keys(kinds))
	slices.SortFunc(names, func(x, y string) int { return int(kinds[y]) - int(kinds[x]) })
	for _, n := range names {
		p.kinds += fmt.Sprintf(" %s=%d", n, kinds[n])
	}
	return p
}

// onCPUs is what rows counted between a and b on cpus, in all and by kind.
func onCPUs(a, b map[string][]uint64, cpus []int) (total uint64, kinds map[string]uint64) {
	kinds = map[string]uint64{}
	for name, rb := range b {
		ra := a[name]
		for _, c := range cpus {
			if c >= 0 && c < len(rb) && c < len(ra) && rb[c] > ra[c] {
				total += rb[c] - ra[c]
				kinds[name] += rb[c] - ra[c]
			}
		}
	}
	return total, kinds
}

func histCount(s metrics.Sample) uint64 {
	var n uint64
	for _, c := range s.Value.Float64Histogram().Counts {
		n += c
	}
	return n
}

func (p passLook) String() string {
	return fmt.Sprintf("user %.2f sys %.2f others %.3f ms; faults %d/%d; switches %d/%d; cpu %d>%d; irqs %d softirqs %d; steal %d irq %d ticks; gc %d allocated %dK released %+dK scavenge %.0fus sched %d;%s",
		ms(p.user), ms(p.sys), ms(p.others), p.minflt, p.majflt, p.nvcsw, p.nivcsw, p.cpu0, p.cpu1, p.irqs, p.softirqs, p.steal, p.irq, p.gcs, p.allocs>>10, p.released>>10, p.scavenge*1e6, p.scheds, p.kinds)
}
