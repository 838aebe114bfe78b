package sampler

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// A --proc tree is untrusted: anything can stand where a kernel file should
// be. These tests put each kind of trap in place of each file the sampler
// reads and check that a pass neither hangs nor trusts the content.

// within fails the test when f has not returned after d: a read that
// blocks forever would otherwise hang the whole test binary.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still running after %v: a read blocked", what, d)
	}
}

// passes opens a sampler on root and samples n passes, reporting any error
// (and returning false) as it goes. Call it inside within.
func passes(t *testing.T, root string, n int) (model.Sample, bool) {
	var smp model.Sample
	s, err := New(Config{Root: root})
	if err != nil {
		t.Errorf("New: %v", err)
		return smp, false
	}
	defer s.Close()
	for range n {
		if err := s.Sample(&smp); err != nil {
			t.Errorf("Sample: %v", err)
			return smp, false
		}
	}
	return smp, true
}

// trap replaces path with one kind of non-file.
type trap struct {
	name string
	make func(t *testing.T, path string)
}

var traps = []trap{
	{"fifo", func(t *testing.T, p string) {
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}},
	{"symlink loop", func(t *testing.T, p string) {
		if err := os.Symlink(filepath.Base(p), p); err != nil {
			t.Fatal(err)
		}
	}},
	{"dev zero link", func(t *testing.T, p string) {
		if err := os.Symlink("/dev/zero", p); err != nil {
			t.Fatal(err)
		}
	}},
	{"directory", func(t *testing.T, p string) {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}},
	{"socket", func(t *testing.T, p string) {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
		if err != nil {
			t.Skipf("cannot bind a socket at %s: %v", p, err)
		}
		l.SetUnlinkOnClose(false)
		t.Cleanup(func() { l.Close() })
	}},
	{"char device", func(t *testing.T, p string) {
		// A copy of /dev/zero: reads never end.
		if err := unix.Mknod(p, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5))); err != nil {
			t.Skipf("mknod: %v", err)
		}
	}},
}

// shortTree copies the fixture under a short directory, so a socket path
// stays within the 108 bytes a unix socket address holds.
func shortTree(t *testing.T) string {
	t.Helper()
	if root, ok := shmTree(t); ok {
		return root
	}
	dir, err := os.MkdirTemp("", "ct")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := filepath.Join(dir, "p")
	if err := os.Rename(copyTree(t, fixture), root); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestTrapsInPlaceOfSystemFiles(t *testing.T) {
	for _, file := range []string{"stat", "interrupts", "loadavg", "pressure/cpu"} {
		for _, tr := range traps {
			t.Run(file+"/"+tr.name, func(t *testing.T) {
				root := shortTree(t)
				p := filepath.Join(root, file)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				tr.make(t, p)
				within(t, 5*time.Second, "New and Sample", func() {
					s, err := New(Config{Root: root})
					if file == "stat" {
						if !errors.Is(err, procfs.ErrNotProcfs) {
							t.Errorf("New with a %s for stat: err = %v, want ErrNotProcfs", tr.name, err)
						}
						if s != nil {
							s.Close()
						}
						return
					}
					if err != nil {
						t.Errorf("New: %v (an optional file should be skipped)", err)
						return
					}
					defer s.Close()
					var smp model.Sample
					if err := s.Sample(&smp); err != nil {
						t.Errorf("Sample: %v", err)
					}
					if smp.System.ContextSwitches == 0 || len(smp.Tasks) == 0 {
						t.Errorf("the rest of the tree went unread: %d tasks, %+v", len(smp.Tasks), smp.System)
					}
					switch file {
					case "loadavg":
						if smp.System.LoadAvg != [3]float64{} {
							t.Errorf("LoadAvg = %v from a %s", smp.System.LoadAvg, tr.name)
						}
					case "pressure/cpu":
						if smp.System.HasPSI {
							t.Errorf("HasPSI from a %s", tr.name)
						}
					case "interrupts":
						if smp.System.ReschedIPIs != 0 {
							t.Errorf("ReschedIPIs = %d from a %s", smp.System.ReschedIPIs, tr.name)
						}
					}
				})
			})
		}
	}
}

func TestTrapsInPlaceOfTaskFiles(t *testing.T) {
	for _, file := range []string{"100/task/101/schedstat", "100/task/101/status", "100/task/101/stat", "100/stat"} {
		for _, tr := range traps {
			t.Run(file+"/"+tr.name, func(t *testing.T) {
				root := shortTree(t)
				p := filepath.Join(root, file)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				tr.make(t, p)
				within(t, 5*time.Second, "two passes", func() {
					smp, ok := passes(t, root, 2)
					if !ok {
						return
					}
					want := []taskID{{100, 100}, {100, 101}, {100, 102}, {200, 200}, {300, 300}, {400, 400}, {400, 401}}
					unreadable := 2 // 101 and the malformed 301
					if file == "100/stat" {
						// The process's own stat is not read: the main
						// thread's says whether to list the task directory.
						unreadable = 1
					} else {
						want = append(want[:1], want[2:]...)
					}
					if diff := cmp.Diff(want, ids(&smp)); diff != "" {
						t.Errorf("tasks (-want +got)\n%s", diff)
					}
					if smp.Unreadable != unreadable {
						t.Errorf("Unreadable = %d, want %d", smp.Unreadable, unreadable)
					}
				})
			})
		}
	}
}

func TestTrapsInPlaceOfDirectories(t *testing.T) {
	for _, dir := range []string{"100/task", "100"} {
		for _, tr := range traps {
			t.Run(dir+"/"+tr.name, func(t *testing.T) {
				root := shortTree(t)
				p := filepath.Join(root, dir)
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
				tr.make(t, p)
				within(t, 5*time.Second, "a pass", func() {
					smp, _ := passes(t, root, 1)
					for _, id := range ids(&smp) {
						if id.PID == 100 {
							t.Errorf("read task %v through a %s", id, tr.name)
						}
					}
				})
			})
		}
	}
}

// TestHugeFilesAreRefused: a 100 MB status once cost 235 MB of memory, read
// whole. Each kind now has a cap well above any real file.
func TestHugeFilesAreRefused(t *testing.T) {
	for _, file := range []string{"100/task/101/status", "100/task/101/stat", "100/task/101/schedstat", "interrupts"} {
		t.Run(file, func(t *testing.T) {
			root := copyTree(t, fixture)
			p := filepath.Join(root, file)
			// Sparse: 100 MB of zero bytes after the real content.
			if err := os.Truncate(p, 100<<20); err != nil {
				t.Fatal(err)
			}
			s := newSampler(t, Config{Root: root})
			var smp model.Sample
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			within(t, 20*time.Second, "a pass", func() { mustSample(t, s, &smp) })
			runtime.ReadMemStats(&after)
			if got := after.TotalAlloc - before.TotalAlloc; got > 2*procfs.LimitInterrupts+(4<<20) {
				t.Errorf("one pass allocated %d MB with a 100 MB %s", got>>20, file)
			}
			if file == "interrupts" {
				if smp.System.ReschedIPIs != 0 {
					t.Errorf("parsed a truncated interrupts file: %+v", smp.System)
				}
				// Refused once, not re-read at every pass.
				if s.sysFD[sysInterrupts] >= 0 {
					t.Error("a 100 MB interrupts file stays open to be read again next pass")
				}
				return
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("one pass allocated %d KB with a 100 MB %s, want under 1 MB", got>>10, file)
			}
			for _, id := range ids(&smp) {
				if id == (taskID{100, 101}) {
					t.Errorf("kept thread 101 with a 100 MB %s", file)
				}
			}
		})
	}
}

// TestHostileNamesAreSanitized: a name or other string from /proc enters
// the model clean, so no view can print an escape sequence.
func TestHostileNamesAreSanitized(t *testing.T) {
	root := copyTree(t, fixture)
	task := filepath.Join(root, "100", "task")
	// The sampler takes a thread's name from stat, raw as comm holds it.
	name := func(tid, comm string) {
		t.Helper()
		rewrite(t, filepath.Join(task, tid, "stat"), func(s string) string {
			return s[:strings.IndexByte(s, '(')+1] + comm + s[strings.LastIndexByte(s, ')'):]
		})
	}
	name("100", "\x1b[2J\x1b[Hpwn")
	name("101", "x\x1b[31mRED\xff")
	name("102", strings.Repeat("长", 40)) // 120 bytes of CJK
	rewrite(t, filepath.Join(task, "101", "status"), func(s string) string {
		s = strings.Replace(s, "State:\tS", "State:\t\x1b", 1)
		return strings.Replace(s, "Cpus_allowed_list:\t", "Cpus_allowed_list:\t\x1b]0;x\x07", 1)
	})
	s := newSampler(t, Config{Root: root})
	var smp model.Sample
	mustSample(t, s, &smp)
	type names struct {
		Comm, ProcessComm, CPUs string
		State                   byte
	}
	var got []names
	for _, c := range smp.Tasks {
		if c.PID == 100 {
			got = append(got, names{c.Comm, c.ProcessComm, c.CPUsAllowed, c.State})
		}
	}
	cjk := strings.Repeat("长", 21) // 63 bytes: the 64-byte cut falls inside the 22nd
	want := []names{
		{"?[2J?[Hpwn", "?[2J?[Hpwn", "0-1", 'R'},
		{"x?[31mRED\ufffd", "?[2J?[Hpwn", "?]0;x?0-1", '?'},
		{cjk, "?[2J?[Hpwn", "0-1", 'S'},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got)\n%s", diff)
	}
}

// TestHugeTaskDirectory: a process listing 100,000 tasks takes linear time
// and bounded memory, and tasks that cannot be read do not count as rows.
func TestHugeTaskDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 100,000 directories")
	}
	root := memTree(t)
	dir := filepath.Join(root, "100", "task")
	const n = 100000
	for i := 1000; i < 1000+n; i++ {
		// Empty: listed, but with no files, like threads that exited
		// between the listing and the read.
		if err := unix.Mkdir(dir+"/"+itoa(i), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := newSampler(t, Config{Root: root})
	var smp model.Sample
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	within(t, 60*time.Second, "two passes", func() {
		mustSample(t, s, &smp)
		mustSample(t, s, &smp)
	})
	runtime.ReadMemStats(&after)
	if got := countPID(&smp, 100); got != 3 {
		t.Errorf("process 100 has %d rows, want its 3 real threads", got)
	}
	// The listing and the pool of task records: a few hundred bytes per entry.
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("two passes over %d entries allocated %d MB", n, got>>20)
	}
}

// memTree copies the fixture into a tmpfs when the machine has one at
// /dev/shm (100,000 directories take ~1 s there, 20 s or more on a busy
// disk), else into t.TempDir.
func memTree(t *testing.T) string {
	t.Helper()
	if root, ok := shmTree(t); ok {
		return root
	}
	return copyTree(t, fixture)
}

func shmTree(t *testing.T) (string, bool) {
	t.Helper()
	var fs unix.Statfs_t
	if unix.Statfs("/dev/shm", &fs) != nil || fs.Type != unix.TMPFS_MAGIC {
		return "", false
	}
	dir, err := os.MkdirTemp("/dev/shm", "ctxtop-")
	if err != nil {
		return "", false
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := filepath.Join(dir, "p")
	if err := os.CopyFS(root, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	return root, true
}

func itoa(v int) string { return string(appendInt(nil, v)) }

// TestTrapsInPlaceOfCgroupAndWaitFiles: /proc/PID/cgroup, a group's
// cpu.stat and a thread's wchan and syscall are read with the same raw
// reader; a trap in place of one is refused at once and gives no figures.
func TestTrapsInPlaceOfCgroupAndWaitFiles(t *testing.T) {
	for _, tr := range traps {
		t.Run("cgroup/"+tr.name, func(t *testing.T) {
			root := shortTree(t)
			p := filepath.Join(root, "100", "cgroup")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			tr.make(t, p)
			within(t, 5*time.Second, "a pass", func() {
				smp, ok := passes(t, root, 1)
				if !ok {
					return
				}
				got := map[int]string{}
				for _, c := range smp.Tasks {
					got[c.PID] = c.Cgroup
				}
				want := map[int]string{100: "", 200: fixturePod, 300: fixtureDocker, 400: ""}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("process cgroups (-want +got)\n%s", diff)
				}
			})
		})
		t.Run("cpu.stat/"+tr.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "cg")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			cg := filepath.Join(dir, "c")
			if err := os.CopyFS(cg, os.DirFS(filepath.Join(testutil.RepoRoot(), "testdata", "cgroup"))); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(cg, "cpu", fixtureService, "cpu.stat")
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			tr.make(t, p)
			within(t, 5*time.Second, "a pass", func() {
				_, cgs := fixtureCgroups(t, cg)
				for _, c := range cgs {
					if c.Path == fixtureService && c != (model.CgroupCounters{Path: fixtureService, LimitCPUs: 0.5}) {
						t.Errorf("a %s for cpu.stat gave %+v, want the limit alone", tr.name, c)
					}
				}
				if len(cgs) != 3 {
					t.Errorf("want the 3 groups named, got %+v", cgs)
				}
			})
		})
		t.Run("wait files/"+tr.name, func(t *testing.T) {
			root := shortTree(t)
			task := filepath.Join(root, "100", "task", "101")
			for _, f := range []string{"wchan", "syscall"} {
				tr.make(t, filepath.Join(task, f))
			}
			fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			w := newLooker(fd)
			defer w.close()
			tg := waitTarget{pid: 100, tid: 101}
			within(t, 5*time.Second, "the reads and a look", func() {
				for _, f := range []string{"wchan", "syscall"} {
					if _, err := w.read(&tg, f); err == nil {
						t.Errorf("read %s from a %s: no error", f, tr.name)
					}
				}
				w.look(&tg)
				if tg.tally.Looks != 0 || len(tg.tally.Reasons) != 0 {
					t.Errorf("a look through a %s counted: %+v", tr.name, tg.tally)
				}
			})
		})
	}
}
