package sampler

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// passCost is what one pass cost: the CPU time of the whole process (every
// thread, the kernel's work in its system calls included) and of the
// thread that made the pass, and the wall time it took.
//
// work counts what the pass did, in threads, deterministically: the
// threads the kernel's walk visited or looked at, the records Go then
// read, and the known threads the listing of /proc stepped over (every
// one for a whole listing). It is what a pass costs without the noise of
// a shared machine's timing.
//
// gcs is how many garbage collections ended during the pass.
type passCost struct {
	cpu, own, wall time.Duration
	work, gcs      int
}

// threadCPU is the calling thread's CPU time. Its clock, not
// getrusage(RUSAGE_THREAD): that one leaves out what the thread ran since
// the scheduler last folded its run time in (a tick, 4 ms at HZ=250), so it
// read 0 for a 1.5 ms spin in 40% of tries and a pass's own CPU came out
// ms short of the process's, as if another thread had worked in it.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// monitorInterval is a monitor's refresh interval, the CLI's default.
const monitorInterval = time.Second

// firstPasses opens a sampler as a monitor does and makes its first n
// passes as a monitor does: the start under the start's GOGC
// (QuietStartGC, as the CLI's), the baseline into one of two samples and
// a copy of its tasks into the other (pipeline.NewLive), the first
// interval's peek halfway through it and its end a refresh interval after
// the baseline, then one pass every gap (on a clock, as a monitor's
// ticks are, not a gap after each pass), alternating the two samples as
// Live does. A monitor's passes are monitorInterval apart; gap may be
// less, for a shorter test. It returns each pass's cost, how many
// threads each pass's walk stepped over (-1 for a walk that visited every
// process: no skipping walk, or the first after it was attached), and the
// CPU time the process spent outside the passes (between them and in
// New), which is the work a pass left to later or to another goroutine.
func firstPasses(tb testing.TB, cfg Config, n int, gap time.Duration) (passes []passCost, skipped []int, outside time.Duration) {
	tb.Helper()
	return watchedPasses(tb, cfg, n, gap, passWatch{})
}

// passWatch is what watchedPasses does beside the passes, outside what it
// measures: around runs just before pass i and returns what runs just
// after it, given the pass's cost. It may be nil.
type passWatch struct {
	around func(i int) (after func(passCost))
	// cold is how many passes follow the n, each after the gap the
	// first interval had (half the monitor's interval), as a measure of
	// what passes after such a gap cost once nothing is new: returned
	// after the n.
	cold int
}

// watchedPasses is firstPasses with w run beside the passes.
func watchedPasses(tb testing.TB, cfg Config, n int, gap time.Duration, w passWatch) (passes []passCost, skipped []int, outside time.Duration) {
	tb.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := cpuTime()
	restoreGC := QuietStartGC()
	s, err := New(cfg)
	if err != nil {
		restoreGC()
		tb.Fatal(err)
	}
	defer s.Close()
	if s.Source() != SourceTaskIter {
		restoreGC()
		tb.Skipf("the task walk does not serve here: %s", s.SourceNote())
	}
	var bufs [2]model.Sample
	prev, cur := &bufs[0], &bufs[1]
	gcs := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	var inPasses time.Duration
	var tick time.Time // the first interval's end, from which passes are a gap apart
	for i := range n + w.cold {
		if i == n {
			outside = cpuTime() - start - inPasses
		}
		switch {
		case i == 1 || i == 2 || i >= n:
			// The peek, then the first interval's end.
			time.Sleep(monitorInterval / 2)
		case i > 2:
			time.Sleep(time.Until(tick.Add(time.Duration(i-2) * gap)))
		}
		if i == 2 {
			tick = time.Now()
		}
		dst := cur
		if i == 0 {
			dst = prev
		}
		var after func(passCost)
		if w.around != nil {
			after = w.around(i)
		}
		metrics.Read(gcs)
		gc0 := gcs[0].Value.Uint64()
		c0, o0, w0 := cpuTime(), threadCPU(), time.Now()
		if err := s.Sample(dst); err != nil {
			tb.Fatal(err)
		}
		p := passCost{cpu: cpuTime() - c0, own: threadCPU() - o0, wall: time.Since(w0)}
		if after != nil {
			after(p)
		}
		metrics.Read(gcs)
		p.gcs = int(gcs[0].Value.Uint64() - gc0)
		switch i {
		case 0:
			cur.Tasks = append(slices.Grow(cur.Tasks[:0], cap(prev.Tasks)), prev.Tasks...)
			restoreGC()
		case 1: // the peek: Next samples into the same sample
		default:
			prev, cur = cur, prev
		}
		skipped = append(skipped, -1)
		if s.it.it.Skipping() {
			skipped[i] = s.it.it.Skipped()
		}
		p.work = passWork(s, dst)
		passes = append(passes, p)
		inPasses += p.cpu
	}
	if w.cold == 0 {
		outside = cpuTime() - start - inPasses
	}
	return passes, skipped, outside
}

// passWork is the work the walk's pass just made (passCost.work).
func passWork(s *Sampler, smp *model.Sample) int {
	ip := s.it
	n := len(ip.order)
	w := n + len(ip.work)
	if ip.it.Skipping() {
		w -= ip.it.Skipped()
	}
	switch {
	case ip.listedWhole:
		w += len(smp.Tasks)
	case ip.sw.fd >= 0:
		w += stepped(ip.sw.spans, hostTIDs(smp))
	}
	return w
}

// walkWork is the part of passWork that is the walk's: the threads it
// visited or looked at and the records Go read.
func walkWork(s *Sampler) int {
	w := len(s.it.order) + len(s.it.work)
	if s.it.it.Skipping() {
		w -= s.it.it.Skipped()
	}
	return w
}

// workRatio is the dearest pass's work after the first over the median
// pass's after the first.
func workRatio(passes []passCost) float64 {
	w := make([]float64, 0, len(passes))
	for _, p := range passes[1:] {
		w = append(w, float64(p.work))
	}
	return slices.Max(w) / max(1, median(w))
}

// passFigures sums up passes: the first pass, the dearest after it, and
// the steady pass (the median of the last ten), by process CPU.
func passFigures(passes []passCost) (first, dearest, steady time.Duration, at int) {
	cpu := costs(passes)
	first = cpu[0]
	at = 1
	for i := 1; i < len(cpu); i++ {
		if cpu[i] > cpu[at] {
			at = i
		}
	}
	return first, cpu[at], median(cpu[max(1, len(cpu)-10):]), at
}

// costs is the passes' process CPU.
func costs(passes []passCost) []time.Duration {
	cpu := make([]time.Duration, len(passes))
	for i, p := range passes {
		cpu[i] = p.cpu
	}
	return cpu
}

func reportFirstPasses(b *testing.B, all [][]passCost, outside []time.Duration) {
	var first, dearest, steady, wall []time.Duration
	var ratio, second, work []float64
	for _, passes := range all {
		f, d, s, _ := passFigures(passes)
		first, dearest, steady = append(first, f), append(dearest, d), append(steady, s)
		ratio = append(ratio, float64(d)/float64(s))
		second = append(second, float64(passes[1].cpu)/float64(s))
		work = append(work, workRatio(passes))
		b.Logf("passes (work, threads): %v", passWorks(passes))
		w := slices.MaxFunc(passes[1:], func(a, b passCost) int { return int(a.wall - b.wall) })
		wall = append(wall, w.wall)
		b.Logf("passes (process CPU, ms): %v", passMs(passes))
		b.Logf("garbage collections ended in each pass: %v", passGCs(passes))
	}
	b.ReportMetric(ms(median(first)), "first-ms")
	b.ReportMetric(ms(median(dearest)), "dearest-ms")
	b.ReportMetric(ms(median(steady)), "steady-ms")
	b.ReportMetric(median(ratio), "dearest/steady")
	b.ReportMetric(median(second), "second/steady")
	b.ReportMetric(ms(median(wall)), "dearest-wall-ms")
	b.ReportMetric(ms(median(outside)), "outside-ms")
	b.ReportMetric(median(work), "work-max/median")
}

func passGCs(passes []passCost) []int {
	out := make([]int, len(passes))
	for i, p := range passes {
		out[i] = p.gcs
	}
	return out
}

func passWorks(passes []passCost) []int {
	out := make([]int, len(passes))
	for i, p := range passes {
		out[i] = p.work
	}
	return out
}

// settle waits until the workload's threads, "ready" once each has
// started, are all asleep (at most one running or runnable: the busy
// one), for up to 60 s: a thread still on its way to its first wait is a
// woken one to every walk, and 100,000 of them take a while on two CPUs.
func settle(tb testing.TB, pid int) {
	tb.Helper()
	s, err := New(Config{Root: "/proc", PIDs: []int{pid}, NoCgroups: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	var smp model.Sample
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := s.Sample(&smp); err != nil {
			tb.Fatal(err)
		}
		awake := 0
		for _, t := range smp.Tasks {
			if t.State == 'R' {
				awake++
			}
		}
		if awake <= 1 {
			return
		}
	}
	tb.Logf("the workload's threads were not all asleep after 60 s: measuring all the same")
}

func passMs(passes []passCost) []float64 {
	out := make([]float64, len(passes))
	for i, p := range passes {
		out[i] = float64(p.cpu.Microseconds()) / 1000
	}
	return out
}

// BenchmarkFirstPasses10kOneBusy is a monitor's first minute, its first
// 60 passes at the default refresh interval (firstPasses), with 10,000
// idle threads and one waking every ms: per pass the CPU time of the
// process, by process CPU: first-ms the first pass, dearest-ms the
// dearest of the others, steady-ms the median of the last ten,
// dearest/steady their ratio (the bound is 2), second/steady the second
// pass's (the first interval's peek) over the steady one,
// dearest-wall-ms the longest pass after the first in wall time,
// outside-ms the process's CPU time outside the passes (New included);
// and work-max/median the dearest pass after the first over the median
// one by the work they did (passCost.work), which a busy machine does not
// blur.
//
// Beside them, halfway through each gap from the first interval's end on,
// the C floor (testutil/cfloor, pacing itself) makes two passes: one over
// as many of the workload's schedstat files as cost what our first passes
// did (so that a hiccup of the host of a given length weighs on both
// alike) and one over all 10,000. Reported:
// dearest/median, our dearest pass after the first over our median one,
// floor-dearest/median and full-floor-dearest/median the same for the
// floor's passes, and over-2x, floor-over-2x and full-floor-over-2x how
// many passes a run cost more than twice their median. Where ours and
// the floor's match, what is left is the host's. Each pass of ours over
// 1.5 times the median is logged with what happened in it (passLook).
func BenchmarkFirstPasses10kOneBusy(b *testing.B) {
	pid := testutil.StartCThreads(b, 10000, true)
	settle(b, pid)
	floor := testutil.StartCFloor(b, "/proc", pid)
	l := newPassLooker(b)
	var full []time.Duration
	for range 5 {
		f, _ := floor.PassOf(b, floor.Threads)
		full = append(full, f)
	}
	perFile := max(median(full)/time.Duration(floor.Threads), 1)
	const steadyPasses = 57 // the passes after the first interval's end
	var all [][]passCost
	var outside []time.Duration
	var sized, whole [][]time.Duration
	for range b.N {
		var looks []passLook
		var ours []time.Duration
		w := passWatch{
			around: func(i int) func(passCost) {
				a := l.look()
				return func(p passCost) {
					looks = append(looks, l.diff(a, l.look(), unix.Gettid()))
					ours = append(ours, p.cpu)
					if i == 2 {
						// The floor paces itself from here, halfway
						// through each gap, so that we do no I/O with
						// it between passes: I/O the scheduler sees
						// left sysmon polling every 20 µs when the
						// next pass came. Its short pass costs what
						// our passes did so far.
						floor.Every(b, monitorInterval, steadyPasses, min(max(int(median(ours[1:])/perFile), 100), floor.Threads))
					}
				}
			},
		}
		p, _, o := watchedPasses(b, Config{Root: "/proc"}, 60, monitorInterval, w)
		all, outside = append(all, p), append(outside, o)
		fs, ff := floor.Collect(b, steadyPasses)
		sized, whole = append(sized, fs), append(whole, ff)
		m := median(ours[1:])
		for i, c := range ours {
			if i > 0 && c > m*3/2 {
				b.Logf("pass %d: %.3f ms, %.1f× the median, work %d: %v", i+1, ms(c), float64(c)/float64(m), p[i].work, looks[i])
			}
		}
		b.Logf("the floor's passes (process CPU, ms), sized: %v; over all the files: %v", durMs(fs), durMs(ff))
		kb := make([]uint64, len(looks))
		for i, lk := range looks {
			kb[i] = lk.allocs >> 10
		}
		b.Logf("allocated in each pass (KB): %v", kb)
	}
	reportFirstPasses(b, all, outside)
	var ratio, fratio, ffratio, over, fover, ffover []float64
	for i, passes := range all {
		ours := make([]time.Duration, 0, len(passes))
		for _, p := range passes[1:] {
			ours = append(ours, p.cpu)
		}
		r, n := spread(ours)
		ratio, over = append(ratio, r), append(over, n)
		r, n = spread(sized[i])
		fratio, fover = append(fratio, r), append(fover, n)
		r, n = spread(whole[i])
		ffratio, ffover = append(ffratio, r), append(ffover, n)
	}
	b.ReportMetric(median(ratio), "dearest/median")
	b.ReportMetric(median(fratio), "floor-dearest/median")
	b.ReportMetric(median(ffratio), "full-floor-dearest/median")
	b.ReportMetric(median(over), "over-2x")
	b.ReportMetric(median(fover), "floor-over-2x")
	b.ReportMetric(median(ffover), "full-floor-over-2x")
}

// spread is the dearest of passes over their median, and how many cost
// more than twice the median.
func spread(passes []time.Duration) (ratio, over2x float64) {
	m := median(passes)
	for _, p := range passes {
		if p > 2*m {
			over2x++
		}
	}
	return float64(slices.Max(passes)) / float64(max(m, 1)), over2x
}

func durMs(d []time.Duration) []float64 {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = float64(v.Microseconds()) / 1000
	}
	return out
}

// BenchmarkFirstPasses100kIdle is the same with 100,000 idle threads, 15
// passes.
//
// The passes are a refresh interval apart, as a monitor's, not less: a
// pass after a second's sleep finds the caches colder than one 50 ms
// after the last, and costs some twice as much at 10,000 threads (2.4
// against 1.2 ms, the walk most of it), so steady passes 50 ms apart made
// the second pass, which follows the first interval, look dearer than
// the passes users get.
func BenchmarkFirstPasses100kIdle(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("100,000 threads need pid_max and threads-max raised, as root")
	}
	testutil.RaiseThreadLimits(b, 100000)
	settle(b, testutil.StartCThreads(b, 100000, false))
	var all [][]passCost
	var outside []time.Duration
	for range b.N {
		p, _, o := firstPasses(b, Config{Root: "/proc"}, 15, monitorInterval)
		all, outside = append(all, p), append(outside, o)
	}
	reportFirstPasses(b, all, outside)
}

// TestFirstPassesAreNoDearer: a monitor's first passes on a host of
// 10,000 threads cost what its later ones do. The walk that steps over
// idle threads (taskiter's skip.go) serves from the second pass on, and no
// pass holds its load: loading it took the verifier 35-57 ms of CPU in the
// one pass that did it, some 35 passes in, against 1.1 ms for a pass after
// it, and the plain walk's passes before it cost 2-3 ms.
// The bound is on CPU time, not wall time, and generous (twice the steady
// pass and 10 ms): a pass that visits the workload's threads again because
// an older process on the host exited (a pair of 3-4 ms passes, the walk's
// way of staying exact) stays under it, beside busy loops too, and the
// verifier's load does not.
// Each pass is held to passes made after the same gap: the second and
// third follow half an interval (the peek, then the first interval's
// end), and a pass after such a gap costs about twice one 50 ms after the
// last on a quiet host (2.2-2.7 against 1.0-1.4 ms here, with nothing new
// to read), caches gone cold, and more than that on a loaded one: a clean
// clone's run on a busy host read 18.4 ms for the second pass against a
// 50-ms steady pass of 3.9 ms. So five passes half an interval apart
// follow the 45 and are the steady pass of the first two.
func TestFirstPassesAreNoDearer(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the walk steps over idle threads on amd64 alone")
	}
	pid := testutil.StartCThreads(t, 10000, true)
	settle(t, pid)
	const n = 45 // past the pass the walk's own rent rule loads it in
	passes, skipped, outside := watchedPasses(t, Config{Root: "/proc"}, n, 50*time.Millisecond, passWatch{cold: 5})
	passes, cold := passes[:n], passes[n:]
	first, _, steady, _ := passFigures(passes)
	coldSteady := median(costs(cold))
	t.Logf("process CPU a pass (ms): %v; skipped: %v; outside the passes %v", passMs(passes), skipped, outside)
	t.Logf("work a pass (threads): %v, dearest after the first %.2f× the median", passWorks(passes), workRatio(passes))
	t.Logf("first pass %v, steady %v, after half an interval %v (%v ms); garbage collections ended in each pass: %v", first, steady, coldSteady, passMs(cold), passGCs(passes))
	// The skipping walk serves from the second pass, or the third when
	// the first did not wait for its load (a loaded host: the verifier
	// took up to a second of wall time here) and the second attached it.
	// How much it skips is the host's business: each process older than
	// the workload that exits shifts the workload's records and has two
	// walks visit it whole (a run beside the rest of this package's tests
	// had six in a row). A full walk, -1, is the hooks not attached yet,
	// or a wake-up they missed (a tracing program of another tool on that
	// CPU): not in all five.
	if !slices.ContainsFunc(skipped[1:6], func(k int) bool { return k >= 0 }) {
		t.Errorf("skipped %v in passes 2-6: no skipping walk served in any of them", skipped[1:6])
	}
	for i, p := range passes[1:] {
		ref, gap := steady, "50 ms"
		if i < 2 {
			ref, gap = coldSteady, "half an interval"
		}
		if limit := 2*ref + 10*time.Millisecond; p.cpu > limit {
			t.Errorf("pass %d cost %v of CPU, a steady pass after %s %v: want at most %v", i+2, p.cpu, gap, ref, limit)
		}
	}
}

// olderExits is a monitor's passes, 50 ms apart, on a host where
// processes older than a workload of threads threads (one busy when busy)
// exit one by one: steady passes first, then exits of them, a few passes
// apart. It returns the CPU cost of every pass and, for each exit, the
// dearer of the two passes after it, and the records those two passes
// read (the walk's rewritten ones and any it had to look up).
func olderExits(tb testing.TB, threads int, busy bool, exits int) (passes []passCost, after []time.Duration, read []int) {
	tb.Helper()
	var older []*exec.Cmd
	for range exits {
		cmd := exec.Command("sleep", "1000")
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		older = append(older, cmd)
		tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	}
	settle(tb, testutil.StartCThreads(tb, threads, busy))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := walkSampler(tb)
	defer s.Close()
	var smp model.Sample
	pass := func() passCost {
		c0, o0, w0 := cpuTime(), threadCPU(), time.Now()
		if err := s.Sample(&smp); err != nil {
			tb.Fatal(err)
		}
		p := passCost{cpu: cpuTime() - c0, own: threadCPU() - o0, wall: time.Since(w0)}
		passes = append(passes, p)
		return p
	}
	pass()
	time.Sleep(time.Second) // the skipping walk's load, as in a monitor
	for range warmPasses {
		pass()
		time.Sleep(50 * time.Millisecond)
	}
	for _, cmd := range older {
		cmd.Process.Kill()
		cmd.Wait()
		a, b := pass(), 0
		b0 := len(s.it.work)
		time.Sleep(50 * time.Millisecond)
		c := pass()
		b = b0 + len(s.it.work)
		after = append(after, max(a.cpu, c.cpu))
		read = append(read, b)
		for range 4 {
			time.Sleep(50 * time.Millisecond)
			pass()
		}
	}
	return passes, after, read
}

// warmPasses is how many passes olderExits makes before the exits, the
// last ten of them the steady ones: past the first passes' settling.
const warmPasses = 30

// BenchmarkOlderExits10kOneBusy is a monitor's passes while processes
// older than 10,000 idle threads and one waking every ms exit, five of
// them: steady-ms the median pass before the exits, exit-ms the median of
// the dearer pass of the two after each exit, exit/steady their ratio (the
// bound is 2), read the records those two passes read.
func BenchmarkOlderExits10kOneBusy(b *testing.B) { benchOlderExits(b, 10000, true) }

// BenchmarkOlderExits100kIdle is the same with 100,000 idle threads.
func BenchmarkOlderExits100kIdle(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("100,000 threads need pid_max and threads-max raised, as root")
	}
	testutil.RaiseThreadLimits(b, 100000)
	benchOlderExits(b, 100000, false)
}

func benchOlderExits(b *testing.B, threads int, busy bool) {
	var steady, exit []time.Duration
	var read []float64
	for range b.N {
		passes, after, r := olderExits(b, threads, busy, 5)
		cpu := make([]time.Duration, 0, 10)
		for _, p := range passes[warmPasses-9 : warmPasses+1] {
			cpu = append(cpu, p.cpu)
		}
		steady = append(steady, median(cpu))
		exit = append(exit, median(after))
		for _, n := range r {
			read = append(read, float64(n))
		}
		b.Logf("passes (process CPU, ms): %v; records read after each exit: %v", passMs(passes), r)
	}
	slices.Sort(read)
	b.ReportMetric(ms(median(steady)), "steady-ms")
	b.ReportMetric(ms(median(exit)), "exit-ms")
	b.ReportMetric(float64(median(exit))/float64(median(steady)), "exit/steady")
	b.ReportMetric(read[len(read)/2], "read")
}

// TestOlderExitCostsNoMore: when a process older than a workload of
// 20,000 threads exits, the workload's records shift down in the walk, and
// the walk moves them rather than rewriting them, so the passes after the
// exit read only what ran and cost what a steady pass does. Visiting the
// workload whole instead (as the walk did) cost two passes of 3-4 ms
// each at 10,000 threads against a steady 1 ms, and read every record
// after the exit twice. Bounds: the records read are a few hundred at most
// (the busy thread, the host's own), not the workload's; the CPU time, the
// median over five exits, at most twice the steady pass and 1 ms, which
// holds beside two busy loops.
func TestOlderExitCostsNoMore(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the walk steps over idle threads on amd64 alone")
	}
	const threads = 20000
	passes, after, read := olderExits(t, threads, true, 5)
	cpu := make([]time.Duration, 0, 10)
	for _, p := range passes[warmPasses-9 : warmPasses+1] {
		cpu = append(cpu, p.cpu)
	}
	steady, exit := median(cpu), median(after)
	t.Logf("process CPU a pass (ms): %v; after each exit: %v; records read in the two passes after each exit: %v", passMs(passes), after, read)
	sorted := slices.Clone(read)
	slices.Sort(sorted)
	if m := sorted[len(sorted)/2]; m > threads/10 {
		t.Errorf("the two passes after an older process's exit read %d records (median of %v), want at most %d: the workload was read again", m, read, threads/10)
	}
	if limit := 2*steady + time.Millisecond; exit > limit {
		t.Errorf("the passes after an older process's exit cost %v of CPU (median of %v), the steady pass %v: want at most %v", exit, after, steady, limit)
	}
}

// TestOlderThreadCostsNoMore: when a process older than a workload of
// 10,000 threads (one busy) starts a thread, the workload's records shift
// up in the walk, and the walk makes room for them rather than visit the
// workload whole: no pass after a start does more work (passCost.work)
// than twice the steady pass. Visiting the workload instead cost the next
// two passes 20,000 and 10,000 threads against a steady 350-400. Work, not
// CPU time, is bounded: it is the same on a busy machine; and the walk's
// (walkWork), not the sweep's, whose share a pass depends on how the
// host's other processes took PIDs among the workload's. A pass made
// while the hooks were dropped (a host waking threads so often that they
// cost more than they save: skip.go) is a plain walk, not this test's
// business, and is left out.
func TestOlderThreadCostsNoMore(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the walk steps over idle threads on amd64 alone")
	}
	_, grow := testutil.StartGrowingCThreads(t, 2)
	settle(t, testutil.StartCThreads(t, 10000, true))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := walkSampler(t)
	defer s.Close()
	var smp model.Sample
	// pass makes a pass and reports its work, -1 for a plain walk.
	pass := func() int {
		if err := s.Sample(&smp); err != nil {
			t.Fatal(err)
		}
		if !s.it.it.Skipping() {
			return -1
		}
		return walkWork(s)
	}
	pass()
	time.Sleep(time.Second) // the skipping walk's load, as in a monitor
	var warm, after []int
	for range warmPasses {
		warm = append(warm, pass())
		time.Sleep(50 * time.Millisecond)
	}
	var work []float64
	for _, w := range warm[len(warm)-10:] {
		if w >= 0 {
			work = append(work, float64(w))
		}
	}
	if len(work) < 5 {
		t.Skipf("the hooks were dropped in %d of the last 10 passes (a host waking threads too often): work %v", 10-len(work), warm)
	}
	steady := median(work)
	checked := 0
	for g := range 5 {
		grow()
		for i := range 3 {
			w := pass()
			after = append(after, w)
			if w >= 0 {
				checked++
			}
			if float64(w) > 2*steady {
				t.Errorf("pass %d after start %d did %d threads' work, the steady pass %.0f: want at most twice that", i+1, g+1, w, steady)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("work a pass (threads, -1 a plain walk) before the starts: %v; after them, three passes each: %v", warm, after)
	if checked < 9 {
		t.Skipf("the hooks were dropped in %d of the 15 passes after the starts (a host waking threads too often)", 15-checked)
	}
}

// BenchmarkSecondPass10kOneBusy is the first five passes of a monitor
// (firstPasses) with 10,000 idle threads and one waking every ms, started
// b.N times over, each start after a collection that returns the heap to
// the OS, so that each begins as a fresh process does: second-ms and
// third-ms are the median process CPU of the second pass (the first
// interval's peek) and the third (its end), gc-second the share of starts
// in which a garbage collection ended in the second pass. Many short
// starts rather than one minute: the second pass is one a start, and a
// shared host's noise needs many of it.
func BenchmarkSecondPass10kOneBusy(b *testing.B) {
	settle(b, testutil.StartCThreads(b, 10000, true))
	var second, third []time.Duration
	gcs := 0
	for range b.N {
		runtime.GC()
		debug.FreeOSMemory()
		p, _, _ := firstPasses(b, Config{Root: "/proc"}, 5, monitorInterval)
		second, third = append(second, p[1].cpu), append(third, p[2].cpu)
		if p[1].gcs > 0 {
			gcs++
		}
		b.Logf("passes (process CPU, ms): %v; work: %v; garbage collections: %v", passMs(p), passWorks(p), passGCs(p))
	}
	b.ReportMetric(ms(median(second)), "second-ms")
	b.ReportMetric(ms(median(third)), "third-ms")
	b.ReportMetric(float64(gcs)/float64(b.N), "gc-second")
}
