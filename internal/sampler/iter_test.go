package sampler

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// The tests here run as root, as CI runs them: the BPF task walk serves,
// and is compared with the /proc path on the same threads.

func TestTaskIterServesWhereItCan(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"host procfs", Config{Root: "/proc"}, SourceTaskIter},
		{"asked not to", Config{Root: "/proc", NoTaskIter: true}, SourceProc},
		{"a --proc tree", Config{Root: fixture}, SourceProc},
	}
	for _, c := range cases {
		s := newSampler(t, c.cfg)
		if got := s.Source(); got != c.want {
			t.Errorf("%s: Source() = %q (%s), want %q", c.name, got, s.SourceNote(), c.want)
		}
	}
	s := newSampler(t, Config{Root: fixture})
	if note := s.SourceNote(); !strings.Contains(note, "not this process's own") {
		t.Errorf("a --proc tree: SourceNote() = %q", note)
	}
}

// TestTaskIterMatchesProcForIdleThreads: the idle workload's threads sleep
// in read(2), so their counters stand still and both paths must give the
// very same TaskCounters, in the same order. Threads that moved between
// the walk before and the walk after the /proc pass are not compared.
func TestTaskIterMatchesProcForIdleThreads(t *testing.T) {
	pid := startIdleThreads(t, 64)
	it := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}})
	pr := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}, NoTaskIter: true})
	if it.Source() != SourceTaskIter {
		t.Fatalf("the walk does not serve: %s", it.SourceNote())
	}
	var before, proc, after model.Sample
	mustSample(t, it, &before)
	mustSample(t, pr, &proc)
	mustSample(t, it, &after)
	// When each path read a thread differs by design: the walk reads all
	// in one call, /proc file by file.
	for _, s := range []*model.Sample{&before, &proc, &after} {
		for i := range s.Tasks {
			s.Tasks[i].ReadAt = 0
		}
	}
	if diff := cmp.Diff(ids(&proc), ids(&after)); diff != "" {
		t.Fatalf("threads and their order (-proc +walk)\n%s", diff)
	}
	still := 0
	for i := range proc.Tasks {
		b, a := before.Tasks[i], after.Tasks[i]
		if b.TID != a.TID || b != a {
			continue
		}
		still++
		// The /proc path reads a thread's affinity list only once the
		// thread runs (readFirst): these have slept since it started.
		if proc.Tasks[i].CPUsAllowed != "" {
			t.Errorf("thread %d: /proc path read the affinity of a thread that has not run", a.TID)
		}
		a.CPUsAllowed = ""
		if diff := cmp.Diff(proc.Tasks[i], a); diff != "" {
			t.Errorf("thread %d (-proc +walk)\n%s", a.TID, diff)
		}
	}
	if still < 64 {
		t.Errorf("only %d threads stood still; the workload has 64 asleep", still)
	}
}

// TestTaskIterRatesAgreeWithProc runs a ping-pong and reads it both ways,
// back to back, twice three seconds apart: each thread's switch rate must
// agree within 1%, and each path's counters must fall between the other's
// reads taken before and after them.
//
// A pass reads a thread at some moment between its start and its end, and
// on a loaded machine a pass can be preempted for tens of milliseconds: a
// rate is only known to within the pass times over the interval. Rounds
// whose passes leave either rate less certain than 0.5% are measured
// again.
func TestTaskIterRatesAgreeWithProc(t *testing.T) {
	pid, tids := testutil.StartPingPong(t)
	it := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}})
	pr := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}, NoTaskIter: true})
	type read struct {
		smp        model.Sample
		start, end time.Time
	}
	sample := func(s *Sampler, r *read) {
		r.start = time.Now()
		mustSample(t, s, &r.smp)
		r.end = time.Now()
	}
	find := func(s *model.Sample, tid int) model.TaskCounters {
		for _, c := range s.Tasks {
			if c.TID == tid {
				return c
			}
		}
		t.Fatalf("thread %d missing from a sample", tid)
		return model.TaskCounters{}
	}
	// interval is the time between two reads of a thread, and how
	// uncertain it is, relative.
	interval := func(r0, r1 *read) (mid time.Duration, rel float64) {
		lo, hi := r1.start.Sub(r0.end), r1.end.Sub(r0.start)
		return (lo + hi) / 2, float64(hi-lo) / float64(lo)
	}
	const rounds = 10
	for round := 1; ; round++ {
		var a0, b0, a1, b1 read
		sample(it, &a0)
		sample(pr, &b0)
		time.Sleep(3 * time.Second)
		sample(it, &a1)
		sample(pr, &b1)
		ia, ua := interval(&a0, &a1)
		ib, ub := interval(&b0, &b1)
		if ua > 0.005 || ub > 0.005 {
			if round == rounds {
				t.Fatalf("in %d rounds the passes never took under 0.5%% of the interval (last: %.2f%%, %.2f%%)", rounds, 100*ua, 100*ub)
			}
			continue
		}
		for _, tid := range tids {
			ia0, ib0, ia1, ib1 := find(&a0.smp, tid), find(&b0.smp, tid), find(&a1.smp, tid), find(&b1.smp, tid)
			sw := func(c model.TaskCounters) float64 { return float64(c.VoluntarySwitches + c.InvoluntarySwitches) }
			walk := (sw(ia1) - sw(ia0)) / ia.Seconds()
			proc := (sw(ib1) - sw(ib0)) / ib.Seconds()
			if walk < 1000 {
				t.Fatalf("thread %d switched only %.0f/s; the ping-pong is not running", tid, walk)
			}
			if d := walk/proc - 1; d > 0.01 || d < -0.01 {
				t.Errorf("thread %d: %.0f switches/s through the walk, %.0f through /proc (%.2f%% apart)", tid, walk, proc, 100*d)
			}
			for _, c := range []struct {
				name       string
				x0, y0, x1 uint64
			}{
				{"voluntary", ia0.VoluntarySwitches, ib0.VoluntarySwitches, ia1.VoluntarySwitches},
				{"timeslices", ia0.Timeslices, ib0.Timeslices, ia1.Timeslices},
				{"run ns", ia0.RunNs, ib0.RunNs, ia1.RunNs},
				{"voluntary (proc first)", ib0.VoluntarySwitches, ia1.VoluntarySwitches, ib1.VoluntarySwitches},
			} {
				if c.y0 < c.x0 || c.y0 > c.x1 {
					t.Errorf("thread %d %s: %d read between %d and %d", tid, c.name, c.y0, c.x0, c.x1)
				}
			}
			if ia1.StartTime != ib1.StartTime || ia1.Comm != ib1.Comm || ia1.CPUsAllowed != ib1.CPUsAllowed || ia1.Cgroup != ib1.Cgroup {
				t.Errorf("thread %d identity: walk %+v, /proc %+v", tid, ia1, ib1)
			}
		}
		return
	}
}

func TestTaskIterSteadyStateDoesNotAllocate(t *testing.T) {
	pid := startIdleThreads(t, 16)
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}})
	if s.Source() != SourceTaskIter {
		t.Fatalf("the walk does not serve: %s", s.SourceNote())
	}
	var smp model.Sample
	mustSample(t, s, &smp)
	mustSample(t, s, &smp)
	if n := testing.AllocsPerRun(50, func() { _ = s.Sample(&smp) }); n != 0 {
		t.Errorf("Sample allocates %v times per pass in the steady state", n)
	}
}

// TestTaskIterFallsBackWithoutPrivilege runs this test binary as nobody:
// the sampler must serve from /proc and say why.
func TestTaskIterFallsBackWithoutPrivilege(t *testing.T) {
	if os.Getenv("CTXTOP_SOURCE_PROBE") != "" {
		s, err := New(Config{Root: "/proc"})
		if err != nil {
			t.Fatal(err)
		}
		var smp model.Sample
		if err := s.Sample(&smp); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("source=" + s.Source() + " tasks>0=" + boolString(len(smp.Tasks) > 0) + " note=" + s.SourceNote() + "\n")
		return
	}
	if os.Geteuid() != 0 {
		t.Fatal("needs root to drop privileges (CI runs the tests as root)")
	}
	// The test binary lives in a directory only root may enter.
	dir, err := os.MkdirTemp("", "ctxtop-probe")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sampler.test")
	copyExecutable(t, os.Args[0], bin)
	cmd := exec.Command(bin, "-test.run=^TestTaskIterFallsBackWithoutPrivilege$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CTXTOP_SOURCE_PROBE=1")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe as nobody: %v\n%s", err, out)
	}
	line := testutil.Between(string(out), "source=", "\n")
	if !strings.HasPrefix(line, SourceProc+" tasks>0=true note=") || !strings.Contains(line, "needs root") {
		t.Errorf("as nobody: source=%s, want %q with tasks and a note that it needs root", line, SourceProc)
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTaskIterFollowsThreadsComingAndGoing ends threads in the middle of
// this process's walk order and starts others, so the records after them
// shift, between passes of one sampler that reads only the records the walk
// rewrote. After each change its view of the test's threads must be what a
// new sampler, reading every record, sees: the same threads, none gone
// missing and none left over, with the same counters for the sleepers.
func TestTaskIterFollowsThreadsComingAndGoing(t *testing.T) {
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{os.Getpid()}})
	if s.Source() != SourceTaskIter {
		t.Fatalf("the walk does not serve: %s", s.SourceNote())
	}
	type sleeper struct {
		tid  int
		wake *os.File
	}
	var wedged []sleeper
	var start func() sleeper
	start = func() sleeper {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		tidc := make(chan int)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tidc <- syscall.Gettid()
			var b [1]byte
			syscall.Read(int(r.Fd()), b[:])
			r.Close()
		}()
		sl := sleeper{<-tidc, w}
		if sl.tid == os.Getpid() {
			// The runtime wedges the main thread rather than end it:
			// it would never leave.
			wedged = append(wedged, sl)
			return start()
		}
		return sl
	}
	stop := func(sl sleeper) {
		sl.wake.Write([]byte{1})
		sl.wake.Close()
		// Until its thread has left the process: on a loaded machine the
		// woken thread may wait long for a CPU.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
			if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(sl.tid)); err != nil {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Fatalf("thread %d did not end within 30 s", sl.tid)
	}
	var live []sleeper
	for range 12 {
		live = append(live, start())
	}
	t.Cleanup(func() {
		for _, sl := range append(live, wedged...) {
			sl.wake.Close()
		}
	})
	var smp model.Sample
	check := func(step string) {
		t.Helper()
		mustSample(t, s, &smp)
		mustSample(t, s, &smp) // a pass at rest after the change
		var fresh model.Sample
		f := newSampler(t, Config{Root: "/proc", PIDs: []int{os.Getpid()}})
		mustSample(t, f, &fresh)
		mustSample(t, s, &smp)
		want := map[int]model.TaskCounters{}
		for _, c := range fresh.Tasks {
			want[c.TID] = c
		}
		got := map[int]model.TaskCounters{}
		for _, c := range smp.Tasks {
			if _, dup := got[c.TID]; dup {
				t.Errorf("%s: thread %d twice", step, c.TID)
			}
			got[c.TID] = c
		}
		for _, sl := range live {
			g, okg := got[sl.tid]
			w, okw := want[sl.tid]
			if !okg || !okw {
				t.Errorf("%s: sleeper %d: in the pass %v, in a new sampler's %v", step, sl.tid, okg, okw)
				continue
			}
			g.ReadAt, w.ReadAt = 0, 0
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s: sleeper %d (-new sampler +this one)\n%s", step, sl.tid, diff)
			}
		}
		for tid := range got {
			if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid)); err != nil {
				t.Errorf("%s: thread %d reported, but gone", step, tid)
			}
		}
	}
	check("12 sleepers")
	for _, i := range []int{8, 5, 2} { // from the middle of the walk's order
		stop(live[i])
		live = slices.Delete(live, i, i+1)
	}
	check("3 ended")
	for range 4 {
		live = append(live, start())
	}
	stop(live[0])
	live = live[1:]
	check("4 started, the first ended")
}

// TestRelistEvery: /proc is listed every 16 passes up to 10,000 threads
// and less often in proportion past them, at most every 255.
func TestRelistEvery(t *testing.T) {
	for _, c := range []struct {
		threads int
		want    uint8
	}{{0, 16}, {100, 16}, {10000, 16}, {10001, 32}, {100000, 160}, {1000000, 255}} {
		if got := relistEvery(c.threads); got != c.want {
			t.Errorf("relistEvery(%d) = %d, want %d", c.threads, got, c.want)
		}
	}
}
