package sampler

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
)

const fixture = "../../testdata/proc"

type taskID struct{ PID, TID int }

func ids(s *model.Sample) []taskID {
	var out []taskID
	for _, t := range s.Tasks {
		out = append(out, taskID{t.PID, t.TID})
	}
	return out
}

func mustSample(t *testing.T, s *Sampler, dst *model.Sample) {
	t.Helper()
	if err := s.Sample(dst); err != nil {
		t.Fatalf("Sample: %v", err)
	}
}

func newSampler(t testing.TB, cfg Config) *Sampler {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// walkSampler is a sampler of the whole host that reads it with the BPF
// task walk; the test is skipped where the walk does not serve. The
// caller closes it, so that a benchmark's runs do not hold one each.
func walkSampler(tb testing.TB) *Sampler {
	tb.Helper()
	s, err := New(Config{Root: "/proc"})
	if err != nil {
		tb.Fatal(err)
	}
	if s.Source() != SourceTaskIter {
		s.Close()
		tb.Skipf("the task walk does not serve here: %s", s.SourceNote())
	}
	return s
}

// fixtureCgroupOf is each fixture process's group as its cgroup file names
// it: 100's v1 cpu hierarchy (over the same v2 path), 200's v2 path, 300's
// v1 cpu hierarchy alone; 400 has no cgroup file.
var fixtureCgroupOf = map[int]string{100: fixtureService, 200: fixturePod, 300: fixtureDocker, 400: ""}

func TestFixtureRoles(t *testing.T) {
	s := newSampler(t, Config{Root: fixture})
	var smp model.Sample
	mustSample(t, s, &smp)

	// 201 vanished mid-read, 250's task dir is gone, 301 is malformed.
	want := []taskID{{100, 100}, {100, 101}, {100, 102}, {200, 200}, {300, 300}, {400, 400}, {400, 401}}
	if diff := cmp.Diff(want, ids(&smp)); diff != "" {
		t.Errorf("tasks (-want +got)\n%s", diff)
	}
	if smp.Unreadable != 1 {
		t.Errorf("Unreadable = %d, want 1 (the malformed thread 301)", smp.Unreadable)
	}

	fs, err := procfs.NewFS(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range smp.Tasks {
		st, err := fs.TaskStatus(got.PID, got.TID)
		if err != nil {
			t.Fatal(err)
		}
		ss, err := fs.TaskSchedstat(got.PID, got.TID)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := fs.TaskStat(got.PID, got.TID)
		if err != nil {
			t.Fatal(err)
		}
		comm, err := fs.TaskComm(got.PID, got.TID)
		if err != nil {
			t.Fatal(err)
		}
		mainComm, err := fs.TaskComm(got.PID, got.PID)
		if err != nil {
			t.Fatal(err)
		}
		want := model.TaskCounters{
			PID: got.PID, TID: got.TID, Comm: comm, ProcessComm: mainComm, Cgroup: fixtureCgroupOf[got.PID],
			StartTime: ts.StartTime, VoluntarySwitches: st.VoluntarySwitches, InvoluntarySwitches: st.InvoluntarySwitches,
			RunNs: ss.RunNs, WaitNs: ss.WaitNs, Timeslices: ss.Timeslices,
			CPUsAllowed: string(st.CPUsAllowed), State: st.State, LastCPU: ts.LastCPU,
		}
		// The read time is the clock's, not the fixture's: readclock_test
		// checks it.
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(model.TaskCounters{}, "ReadAt")); diff != "" {
			t.Errorf("task %d/%d (-want +got)\n%s", got.PID, got.TID, diff)
		}
	}
	if got := smp.Tasks[1]; got.Comm != "pool-1-thread-1" || got.ProcessComm != "app-server" || got.CPUsAllowed == "" {
		t.Errorf("thread 101 = %q of %q on CPUs %q", got.Comm, got.ProcessComm, got.CPUsAllowed)
	}
	if smp.System.ContextSwitches == 0 || smp.System.CPUs == 0 || !smp.System.HasPSI || len(smp.System.ReschedPerCPU) != smp.System.CPUs {
		t.Errorf("system counters not read: %+v", smp.System)
	}
	// testdata/proc/pressure/cpu: "some ... total=64211273".
	if !smp.System.HasPSITotal || smp.System.PSICPUSomeTotalUs != 64211273 {
		t.Errorf("PSI some total = %d (present %v), want 64211273", smp.System.PSICPUSomeTotalUs, smp.System.HasPSITotal)
	}
}

// A kernel without PSI has no pressure/cpu: not an error, no PSI figures.
func TestNoPressureFile(t *testing.T) {
	root := copyTree(t, fixture)
	if err := os.Remove(filepath.Join(root, "pressure", "cpu")); err != nil {
		t.Fatal(err)
	}
	s := newSampler(t, Config{Root: root})
	var smp model.Sample
	mustSample(t, s, &smp)
	if smp.System.HasPSI || smp.System.HasPSITotal || smp.System.ContextSwitches == 0 {
		t.Errorf("system counters without pressure/cpu: %+v", smp.System)
	}
}

// copyTree copies the fixture so a test can change it between samples.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func rewrite(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// In place, keeping the inode, as the kernel's files do.
	if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func setStatusField(key string, v uint64) func(string) string {
	return func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.HasPrefix(l, key+":") {
				lines[i] = key + ":\t" + strconv.FormatUint(v, 10)
			}
		}
		return strings.Join(lines, "\n")
	}
}

// setStatField replaces field n (1-based, as in proc(5)) of a stat line.
func setStatField(n int, v string) func(string) string {
	return func(s string) string {
		end := strings.LastIndexByte(s, ')')
		fields := strings.Fields(s[end+1:])
		fields[n-3] = v
		return s[:end+1] + " " + strings.Join(fields, " ") + "\n"
	}
}

func TestFixtureChangesBetweenSamples(t *testing.T) {
	root := copyTree(t, fixture)
	s := newSampler(t, Config{Root: root})
	var a, b model.Sample
	mustSample(t, s, &a)
	task := func(smp *model.Sample, pid, tid int) *model.TaskCounters {
		for i := range smp.Tasks {
			if smp.Tasks[i].PID == pid && smp.Tasks[i].TID == tid {
				return &smp.Tasks[i]
			}
		}
		return nil
	}
	t101, t102 := *task(&a, 100, 101), *task(&a, 100, 102)
	dir := filepath.Join(root, "100", "task")

	// 101 ran: its schedstat moved, so its status must be re-read.
	rewrite(t, filepath.Join(dir, "101", "schedstat"), func(string) string {
		return strconv.FormatUint(t101.RunNs+5e6, 10) + " " + strconv.FormatUint(t101.WaitNs+1e6, 10) + " " + strconv.FormatUint(t101.Timeslices+11, 10) + "\n"
	})
	rewrite(t, filepath.Join(dir, "101", "status"), setStatusField("voluntary_ctxt_switches", t101.VoluntarySwitches+10))
	// 100 did not run (schedstat unchanged): a status change must go unseen,
	// which is the whole point of gating on schedstat.
	rewrite(t, filepath.Join(dir, "100", "status"), setStatusField("voluntary_ctxt_switches", 999999))
	// 102's TID was reused by a new thread: new start time, fresh counters.
	rewrite(t, filepath.Join(dir, "102", "schedstat"), func(string) string { return "1000 10 1\n" })
	rewrite(t, filepath.Join(dir, "102", "stat"), setStatField(22, strconv.FormatUint(t102.StartTime+500, 10)))
	rewrite(t, filepath.Join(dir, "102", "status"), setStatusField("voluntary_ctxt_switches", 1))
	mustSample(t, s, &b)

	got101 := task(&b, 100, 101)
	if got101 == nil || got101.VoluntarySwitches != t101.VoluntarySwitches+10 || got101.Timeslices != t101.Timeslices+11 {
		t.Errorf("101 after it ran = %+v", got101)
	}
	if got := task(&b, 100, 100); got == nil || got.VoluntarySwitches == 999999 {
		t.Errorf("100 re-read although its schedstat did not move: %+v", got)
	}
	got102 := task(&b, 100, 102)
	if got102 == nil || got102.StartTime != t102.StartTime+500 || got102.VoluntarySwitches != 1 {
		t.Errorf("102 after TID reuse = %+v", got102)
	}

	// 102 exits: gone from the listing and from num_threads.
	if err := os.RemoveAll(filepath.Join(dir, "102")); err != nil {
		t.Fatal(err)
	}
	rewrite(t, filepath.Join(dir, "100", "stat"), setStatField(20, "2"))
	mustSample(t, s, &a)
	want := []taskID{{100, 100}, {100, 101}, {200, 200}, {300, 300}, {400, 400}, {400, 401}}
	if diff := cmp.Diff(want, ids(&a)); diff != "" {
		t.Errorf("after 102 exited (-want +got)\n%s", diff)
	}

	// A whole process exits.
	if err := os.RemoveAll(filepath.Join(root, "400")); err != nil {
		t.Fatal(err)
	}
	mustSample(t, s, &b)
	want = want[:4]
	if diff := cmp.Diff(want, ids(&b)); diff != "" {
		t.Errorf("after 400 exited (-want +got)\n%s", diff)
	}
}

func TestFixtureUnreadableTasks(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads mode-000 files; the command-line test covers this as an unprivileged user")
	}
	root := copyTree(t, fixture)
	for _, tid := range []string{"400", "401"} {
		for _, f := range []string{"schedstat", "status", "stat"} {
			if err := os.Chmod(filepath.Join(root, "400", "task", tid, f), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := newSampler(t, Config{Root: root})
	var smp model.Sample
	mustSample(t, s, &smp)
	if smp.Unreadable != 3 {
		t.Errorf("Unreadable = %d, want 3 (400, 401 and malformed 301)", smp.Unreadable)
	}
}

func TestLiveThreadsAndTargetsGone(t *testing.T) {
	pid := startIdleThreads(t, 8)
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}})
	var smp model.Sample
	mustSample(t, s, &smp)
	if n := countPID(&smp, pid); n < 9 {
		t.Errorf("saw %d threads of the workload, want at least 9 (8 idle + main)", n)
	}
	for _, tk := range smp.Tasks {
		if tk.PID != pid {
			t.Errorf("task %d/%d is outside the --pid filter", tk.PID, tk.TID)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := s.Sample(&smp)
		if errors.Is(err, ErrTargetsGone) {
			break
		}
		if err != nil {
			t.Fatalf("Sample after the target died: %v, want ErrTargetsGone", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still sampling %d tasks after the target was killed", len(smp.Tasks))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	if _, err := New(Config{Root: t.TempDir()}); !errors.Is(err, procfs.ErrNotProcfs) {
		t.Errorf("empty dir as root: err = %v, want ErrNotProcfs", err)
	}
	if _, err := New(Config{Root: fixture, PIDs: []int{999}}); err == nil || !strings.Contains(err.Error(), "no such process: 999") {
		t.Errorf("missing pid: err = %v", err)
	}
	if _, err := New(Config{Root: fixture, PIDs: []int{-3}}); err == nil {
		t.Error("negative pid accepted")
	}
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{os.Getpid()}})
	var smp model.Sample
	mustSample(t, s, &smp)
	mustSample(t, s, &smp)
	if n := testing.AllocsPerRun(50, func() { _ = s.Sample(&smp) }); n != 0 {
		t.Errorf("Sample allocates %v times per pass in the steady state", n)
	}
}

func TestAppendDirentIntsIgnoresJunk(t *testing.T) {
	rec := func(name string) []byte {
		b := make([]byte, 19, 32)
		b = append(b, name...)
		b = append(b, 0)
		for len(b)%8 != 0 {
			b = append(b, 0)
		}
		b[16], b[17] = byte(len(b)), byte(len(b)>>8)
		return b
	}
	var buf []byte
	for _, n := range []string{".", "..", "12", "self", "7x", "345"} {
		buf = append(buf, rec(n)...)
	}
	got := appendDirentInts(append(buf, 1, 2, 3), nil)
	if diff := cmp.Diff([]int{12, 345}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestActivityGateNeverHidesAWakeup checks the taskstats shortcut: once a
// process has been seen idle its threads are skipped, so a thread that wakes
// afterwards must still show up with its new counters.
func TestActivityGateNeverHidesAWakeup(t *testing.T) {
	w := startWorkload(t, 8, false)
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{w.pid}})
	if os.Geteuid() == 0 && !s.TaskstatsGate() {
		t.Log("taskstats unavailable here even as root; testing the plain path")
	}
	sum := func(smp *model.Sample) (n uint64) {
		for _, tk := range smp.Tasks {
			n += tk.VoluntarySwitches + tk.InvoluntarySwitches
		}
		return n
	}
	var smp model.Sample
	// List, prime the gate, then skip. An idle process's runtime threads
	// still run now and then, more often on a loaded host where their
	// work is delayed: pass until one pass found it idle, or 10 s.
	for deadline := time.Now().Add(10 * time.Second); ; {
		mustSample(t, s, &smp)
		if !s.TaskstatsGate() || s.gateSkips > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the idle workload was never skipped by the taskstats gate")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	before := sum(&smp)
	w.poke(t)
	deadline := time.Now().Add(3 * time.Second)
	for {
		time.Sleep(20 * time.Millisecond)
		mustSample(t, s, &smp)
		if sum(&smp) > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a woken thread's switches never showed: still %d", before)
		}
	}
}

func FuzzParseTaskstatsReply(f *testing.F) {
	f.Add(genlRequest(0x1f, 1, 1, make([]byte, 4)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseTaskstatsReply(b) })
}

func TestParseTaskstatsReplyErrno(t *testing.T) {
	b := make([]byte, 36)
	binary.NativeEndian.PutUint32(b, 36)
	binary.NativeEndian.PutUint16(b[4:], 2) // NLMSG_ERROR
	binary.NativeEndian.PutUint32(b[16:], uint32(0xFFFFFFFD))
	if _, err := parseTaskstatsReply(b); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("err = %v, want ESRCH from an error reply of -3", err)
	}
}

// TestThreadChurn samples a process whose threads are created and exit
// continuously: exits between listing and reading, TIDs reused, must never be
// an error, a duplicate, or a task out of order.
func TestThreadChurn(t *testing.T) {
	w := startWorkload(t, 4, false, "CTXTOP_CHURN=1")
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{w.pid}})
	var smp model.Sample
	seen := map[int]bool{}
	deadline := time.Now().Add(1500 * time.Millisecond)
	passes := 0
	for time.Now().Before(deadline) {
		mustSample(t, s, &smp)
		passes++
		for i, tk := range smp.Tasks {
			seen[tk.TID] = true
			if tk.StartTime == 0 || tk.Comm == "" {
				t.Fatalf("half-read task %+v", tk)
			}
			if i > 0 {
				p := smp.Tasks[i-1]
				if p.PID > tk.PID || p.PID == tk.PID && p.TID >= tk.TID {
					t.Fatalf("tasks out of order or duplicated: %d/%d then %d/%d", p.PID, p.TID, tk.PID, tk.TID)
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if len(seen) < 10 {
		t.Errorf("saw only %d distinct threads in %d passes; the churn workload is not churning", len(seen), passes)
	}
}

// A thread that exits while another starts leaves num_threads unchanged (a
// load restarted with new pinning does exactly that). The newcomer must be
// read in the pass that notices the loss, not a pass later: a thread needs
// two reads for a rate, so every pass of delay is a refresh without its row.
func TestReplacedThreadReadInSamePass(t *testing.T) {
	root := copyTree(t, fixture)
	s := newSampler(t, Config{Root: root})
	var a, b model.Sample
	mustSample(t, s, &a)
	dir := filepath.Join(root, "100", "task")
	// 102 ran on its way out (its kept-open schedstat moved), then its
	// directory went; 105 took its place.
	if err := os.CopyFS(filepath.Join(dir, "105"), os.DirFS(filepath.Join(dir, "102"))); err != nil {
		t.Fatal(err)
	}
	rewrite(t, filepath.Join(dir, "102", "schedstat"), func(string) string { return "999999999 999 999\n" })
	if err := os.RemoveAll(filepath.Join(dir, "102")); err != nil {
		t.Fatal(err)
	}
	mustSample(t, s, &b)
	want := []taskID{{100, 100}, {100, 101}, {100, 105}, {200, 200}, {300, 300}, {400, 400}, {400, 401}}
	if diff := cmp.Diff(want, ids(&b)); diff != "" {
		t.Errorf("after 102 was replaced by 105 (-want +got)\n%s", diff)
	}
}

// A thread found in a pass takes its switch counts and migrations from
// sched and leaves status unread; it reads status, affinity and all, once
// it ran or queued for a CPU, the passes whose rates give it a row.
func TestFirstReadTakesCountsFromSched(t *testing.T) {
	root := copyTree(t, fixture)
	task := func(tid string) string { return filepath.Join(root, "100", "task", tid) }
	for _, tid := range []string{"101", "102"} {
		sched := "pool (" + tid + ", #threads: 3)\n----\nse.nr_migrations : 7\nnr_switches : 30\n" +
			"nr_voluntary_switches : 20\nnr_involuntary_switches : 10\n"
		if err := os.WriteFile(filepath.Join(task(tid), "sched"), []byte(sched), 0o644); err != nil {
			t.Fatal(err)
		}
		rewrite(t, filepath.Join(task(tid), "status"), setStatusField("voluntary_ctxt_switches", 21))
	}
	s := newSampler(t, Config{Root: root})
	find := func(smp *model.Sample, tid int) model.TaskCounters {
		t.Helper()
		for _, c := range smp.Tasks {
			if c.TID == tid {
				return c
			}
		}
		t.Fatalf("thread %d not sampled", tid)
		return model.TaskCounters{}
	}
	var a, b model.Sample
	mustSample(t, s, &a)
	for _, tid := range []int{101, 102} {
		c := find(&a, tid)
		if c.VoluntarySwitches != 20 || c.InvoluntarySwitches != 10 || c.Counters[model.Migrations] != 7 || c.CPUsAllowed != "" || c.State != 'S' {
			t.Errorf("first read of %d: %d/%d switches, %d migrations, CPUs %q, state %c; want 20/10 from sched, 7, unread, S",
				tid, c.VoluntarySwitches, c.InvoluntarySwitches, c.Counters[model.Migrations], c.CPUsAllowed, c.State)
		}
	}
	// Without a sched file (CONFIG_SCHED_DEBUG off) status serves.
	if c := find(&a, 100); c.CPUsAllowed == "" {
		t.Errorf("thread 100 without sched: CPUs unread")
	}
	// 101 ran; 102 only queued for a CPU (its run-queue wait moved).
	rewrite(t, filepath.Join(task("101"), "schedstat"), func(string) string { return "20352234 2657238 902\n" })
	rewrite(t, filepath.Join(task("102"), "schedstat"), func(s string) string {
		f := strings.Fields(s)
		return f[0] + " 99999999 " + f[2] + "\n"
	})
	mustSample(t, s, &b)
	for _, tid := range []int{101, 102} {
		if c := find(&b, tid); c.VoluntarySwitches != 21 || c.CPUsAllowed == "" {
			t.Errorf("after %d ran or queued: %d voluntary switches, CPUs %q; want status read (21, its list)", tid, c.VoluntarySwitches, c.CPUsAllowed)
		}
	}
}

// Live, sched's switch counts are status's: the same kernel counters.
func TestSchedCountsMatchStatus(t *testing.T) {
	pid := startIdleThreads(t, 16)
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}, NoTaskIter: true, NoTaskstats: true})
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var a, b model.Sample
	mustSample(t, s, &a)
	var status []procfs.TaskStatus
	for _, c := range a.Tasks {
		st, err := fs.TaskStatus(c.PID, c.TID)
		if err != nil {
			t.Fatal(err)
		}
		status = append(status, st)
	}
	mustSample(t, s, &b)
	still := 0
	for i, c := range a.Tasks {
		// Only threads that stood still across both passes: the status
		// read between them saw what the first pass saw.
		if i >= len(b.Tasks) || b.Tasks[i].TID != c.TID || b.Tasks[i].Timeslices != c.Timeslices || b.Tasks[i].RunNs != c.RunNs {
			continue
		}
		still++
		if st := status[i]; st.VoluntarySwitches != c.VoluntarySwitches || st.InvoluntarySwitches != c.InvoluntarySwitches || st.State != c.State {
			t.Errorf("thread %d: sched %d/%d %c, status %d/%d %c", c.TID, c.VoluntarySwitches, c.InvoluntarySwitches, c.State,
				st.VoluntarySwitches, st.InvoluntarySwitches, st.State)
		}
	}
	if still < 16 {
		t.Errorf("only %d threads stood still; the workload has 16 asleep", still)
	}
}

// TestKernelThreadIsNotAskedItsCount: a kernel thread is a process of one
// thread for good, so a pass does not read its num_threads, where a
// process of one user thread has it read every pass (the host's kernel
// threads are most of its processes: some 90 reads of stat a refresh
// fewer). So a second thread that only the count announces is found in the
// user process, and not looked for in the kernel thread.
func TestKernelThreadIsNotAskedItsCount(t *testing.T) {
	root := copyTree(t, fixture)
	one := func(pid, tid string, flags string) {
		dir := filepath.Join(root, pid, "task", tid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cg, err := os.ReadFile(filepath.Join(root, "100", "cgroup"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, pid, "cgroup"), cg, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"comm", "schedstat", "stat", "status"} {
			b, err := os.ReadFile(filepath.Join(root, "100", "task", "100", f))
			if err != nil {
				t.Fatal(err)
			}
			if f == "stat" {
				s := strings.Replace(string(b), "100 (app-server)", tid+" (app-server)", 1)
				s = setStatField(9, flags)(setStatField(20, "1")(s))
				b = []byte(s)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	const user, kernel = "4194304", "2129984" // PF_KTHREAD in the second
	one("500", "500", user)
	one("600", "600", kernel)
	s := newSampler(t, Config{Root: root})
	var a, b model.Sample
	mustSample(t, s, &a)
	mustSample(t, s, &b)
	// Each gains a thread on paper: a new task directory and num_threads 2.
	one("500", "501", user)
	one("600", "601", kernel)
	for _, pid := range []string{"500", "600"} {
		rewrite(t, filepath.Join(root, pid, "task", pid, "stat"), setStatField(20, "2"))
	}
	mustSample(t, s, &a)
	got := map[taskID]bool{}
	for _, id := range ids(&a) {
		got[id] = true
	}
	if !got[taskID{500, 500}] || !got[taskID{500, 501}] {
		t.Errorf("the user process's threads %v: want 500 and 501", ids(&a))
	}
	// The newcomer of a process whose name and cgroup held gets them.
	for _, c := range a.Tasks {
		if c.TID == 501 && (c.ProcessComm != "app-server" || c.Cgroup != fixtureCgroupOf[100]) {
			t.Errorf("thread 501 of %q in %q, want app-server in %q", c.ProcessComm, c.Cgroup, fixtureCgroupOf[100])
		}
	}
	if !got[taskID{600, 600}] || got[taskID{600, 601}] {
		t.Errorf("the kernel thread's %v: want 600 alone, its count not read", ids(&a))
	}
}
