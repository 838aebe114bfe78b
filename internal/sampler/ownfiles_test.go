package sampler

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// procPathSampler opens a sampler on the /proc path without the taskstats
// gate, the path that reads every thread's schedstat each pass.
func procPathSampler(t *testing.T, pid int) *Sampler {
	t.Helper()
	s, err := New(Config{Root: "/proc", PIDs: []int{pid}, NoCgroups: true, NoTaskstats: true, NoTaskIter: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTaskFilesAreInThePrivateTable checks that the kept-open schedstat
// files live in the files thread's own table: listed in its
// /proc/self/task/TID/fd, and absent from (or another file in) the table
// every other thread shares.
func TestTaskFilesAreInThePrivateTable(t *testing.T) {
	pid := testutil.StartCThreads(t, 20, false)
	s := procPathSampler(t, pid)
	defer s.Close()
	if s.own == nil {
		t.Fatal("no files thread: unshare(CLONE_FILES) refused?")
	}
	if s.own.tid == os.Getpid() {
		t.Errorf("the files thread is the main thread, which never exits")
	}
	var smp model.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, tk := range s.tasks {
		if tk.fd < 0 {
			continue
		}
		kept++
		want := "/proc/" + strconv.Itoa(tk.pid) + "/task/" + strconv.Itoa(tk.tid) + "/schedstat"
		fd := strconv.Itoa(tk.fd)
		own, err := os.Readlink("/proc/self/task/" + strconv.Itoa(s.own.tid) + "/fd/" + fd)
		if err != nil || own != want {
			t.Errorf("fd %s in the files thread's table: %q, %v; want %s", fd, own, err, want)
		}
		if shared, err := os.Readlink("/proc/self/fd/" + fd); err == nil && shared == want {
			t.Errorf("fd %s is %s in the shared table too", fd, shared)
		}
	}
	if kept < 20 {
		t.Errorf("%d schedstat files kept open, want 20+", kept)
	}
}

// TestPrivateTableSamplesTheSame compares a pass through the files thread
// with one on the caller's thread over the same idle threads: the same
// counters, field for field (only the read times differ).
func TestPrivateTableSamplesTheSame(t *testing.T) {
	pid := testutil.StartCThreads(t, 50, false)
	settle(t, pid)
	own := procPathSampler(t, pid)
	defer own.Close()
	shared := procPathSampler(t, pid)
	defer shared.Close()
	if own.own == nil {
		t.Fatal("no files thread: unshare(CLONE_FILES) refused?")
	}
	shared.own.close(shared)
	shared.own = nil
	var a, b model.Sample
	for pass := range 3 {
		if err := own.Sample(&a); err != nil {
			t.Fatal(err)
		}
		if err := shared.Sample(&b); err != nil {
			t.Fatal(err)
		}
		for _, smp := range []*model.Sample{&a, &b} {
			for i := range smp.Tasks {
				smp.Tasks[i].ReadAt = 0
			}
		}
		if len(a.Tasks) < 51 {
			t.Fatalf("pass %d: %d tasks, want 51", pass, len(a.Tasks))
		}
		if diff := cmp.Diff(b.Tasks, a.Tasks); diff != "" {
			t.Errorf("pass %d: the files thread's tasks differ (-caller's +files thread's):\n%s", pass, diff)
		}
		if a.Unreadable != b.Unreadable {
			t.Errorf("pass %d: unreadable %d, want %d", pass, a.Unreadable, b.Unreadable)
		}
	}
}

// TestSharedFilesSurviveThePasses keeps files open in the shared table
// while passes open and close task files on the files thread as threads
// come and go, and after Close: each must still be the file it was. A
// close made in the wrong table would take one of them.
func TestSharedFilesSurviveThePasses(t *testing.T) {
	var fds []int
	for range 64 {
		f, err := os.Open("/proc/self/status")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fds = append(fds, int(f.Fd()))
	}
	pid, grow := testutil.StartGrowingCThreads(t, 10)
	s := procPathSampler(t, pid)
	var smp model.Sample
	for range 5 {
		grow()
		if err := s.Sample(&smp); err != nil {
			t.Fatal(err)
		}
	}
	tid := s.own.tid
	s.Close()
	for _, fd := range fds {
		if got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err != nil || got != "/proc/"+strconv.Itoa(os.Getpid())+"/status" {
			t.Errorf("fd %d after the passes: %q, %v", fd, got, err)
		}
	}
	// Close ends the thread, and its table with it.
	if !eventually(func() bool { return !exists("/proc/self/task/" + strconv.Itoa(tid)) }) {
		t.Errorf("the files thread %d outlived Close", tid)
	}
}

// TestDroppedSamplerEndsItsThread drops a sampler unclosed: its files
// thread, and the files in its table, go when it is collected.
func TestDroppedSamplerEndsItsThread(t *testing.T) {
	pid := testutil.StartCThreads(t, 5, false)
	tid := func() int {
		s := procPathSampler(t, pid)
		var smp model.Sample
		if err := s.Sample(&smp); err != nil {
			t.Fatal(err)
		}
		return s.own.tid
	}()
	if !eventually(func() bool { runtime.GC(); return !exists("/proc/self/task/" + strconv.Itoa(tid)) }) {
		t.Errorf("the files thread %d outlived its dropped sampler", tid)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// eventually polls cond for up to ten seconds.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
