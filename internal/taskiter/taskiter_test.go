package taskiter

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// rec builds a record as the program writes it.
func rec(tid, tgid uint32, comm string, mask []uint64) []byte {
	b := make([]byte, recordSize(len(mask)))
	le := binary.LittleEndian
	le.PutUint32(b, tid)
	le.PutUint32(b[4:], tgid)
	for i, v := range []uint64{123e7, 5, 6, 700, 80, 11} {
		le.PutUint64(b[8+8*i:], v)
	}
	le.PutUint32(b[56:], 1)             // cpu
	le.PutUint32(b[60:], 1)             // TASK_INTERRUPTIBLE
	le.PutUint32(b[68:], pfKthread|0x4) // other flags are not the program's to send, but ignored
	le.PutUint64(b[72:], 9)             // nr_migrations
	copy(b[80:96], comm)
	for i, w := range mask {
		le.PutUint64(b[recMaskOff+8*i:], w)
	}
	return b
}

func TestDecode(t *testing.T) {
	var r Record
	if err := decode(rec(42, 40, "worker", []uint64{0b1011}), 1, &r); err != nil {
		t.Fatal(err)
	}
	want := Record{
		TID: 42, PID: 40, StartNs: 123e7, VoluntarySwitches: 5, InvoluntarySwitches: 6,
		RunNs: 700, WaitNs: 80, Timeslices: 11, Migrations: 9, CPU: 1, State: 1, Kernel: true,
		Comm: []byte("worker"), Mask: []byte{0b1011, 0, 0, 0, 0, 0, 0, 0},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	// A 16-byte name has no NUL: all of it.
	if err := decode(rec(1, 1, "0123456789abcdef", []uint64{1}), 1, &r); err != nil || string(r.Comm) != "0123456789abcdef" {
		t.Errorf("full-length name: %q, %v", r.Comm, err)
	}
}

func TestDecodeRejects(t *testing.T) {
	good := rec(42, 40, "x", []uint64{1})
	cases := map[string][]byte{
		"empty":        nil,
		"short":        good[:len(good)-1],
		"long":         append(append([]byte(nil), good...), 0),
		"tid 0":        rec(0, 40, "x", []uint64{1}),
		"tgid 0":       rec(42, 0, "x", []uint64{1}),
		"tid too big":  rec(maxID, 40, "x", []uint64{1}),
		"tgid too big": rec(42, 1<<31, "x", []uint64{1}),
	}
	cpu := rec(42, 40, "x", []uint64{1})
	binary.LittleEndian.PutUint32(cpu[56:], 1<<20)
	cases["cpu out of range"] = cpu
	for name, b := range cases {
		var r Record
		if err := decode(b, 1, &r); !errors.Is(err, ErrRecord) {
			t.Errorf("%s: err = %v, want ErrRecord", name, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(rec(42, 40, "worker", []uint64{3}), 1)
	f.Add(rec(7, 7, "", []uint64{1, 2}), 2)
	f.Fuzz(func(t *testing.T, b []byte, words int) {
		if words < 0 || words > MaxMaskWords {
			return
		}
		var r Record
		if err := decode(b, words, &r); err == nil {
			if r.TID <= 0 || r.TID >= maxID || r.PID <= 0 || r.PID >= maxID || len(r.Comm) > 16 || len(r.Mask) != 8*words {
				t.Errorf("accepted out of range: %+v", r)
			}
		}
	})
}

func TestStateLetter(t *testing.T) {
	cases := []struct {
		state, exit uint32
		want        byte
	}{
		{0, 0, 'R'},
		{0x1, 0, 'S'},
		{0x2, 0, 'D'},
		{0x4, 0, 'T'},
		{0x8, 0, 't'},
		{0, 0x10, 'X'},
		{0, 0x20, 'Z'},
		{0x40, 0, 'P'},
		{0x402, 0, 'I'},  // TASK_IDLE: an idle kernel thread
		{0x1000, 0, 'D'}, // an RT lock wait shows as uninterruptible
		{0x8001, 0, 'D'}, // frozen
		{0x100, 0, 'R'},  // TASK_WAKING alone reports nothing else
	}
	for _, c := range cases {
		if got := StateLetter(c.state, c.exit); got != c.want {
			t.Errorf("StateLetter(%#x, %#x) = %c, want %c", c.state, c.exit, got, c.want)
		}
	}
}

func TestAppendCPUList(t *testing.T) {
	le := func(words ...uint64) []byte {
		b := make([]byte, 8*len(words))
		for i, w := range words {
			binary.LittleEndian.PutUint64(b[8*i:], w)
		}
		return b
	}
	cases := []struct {
		mask []byte
		ncpu int
		want string
	}{
		{le(0b11), 2, "0-1"},
		{le(0b1), 2, "0"},
		{le(0b10), 2, "1"},
		{le(0), 2, ""},
		{le(0b1111_0000_1101), 12, "0,2-3,8-11"},
		{le(^uint64(0)), 4, "0-3"}, // bits past the possible CPUs are not CPUs
		{le(1<<63, 1), 128, "63-64"},
	}
	for _, c := range cases {
		if got := string(AppendCPUList(nil, c.mask, c.ncpu)); got != c.want {
			t.Errorf("AppendCPUList(%x, %d) = %q, want %q", c.mask, c.ncpu, got, c.want)
		}
	}
}

// TestWalkMatchesProc reads this process's threads both ways: a locked
// thread asleep in a pipe read is still, so /proc's view of it must be what
// the walk saw, field for field, and every field /proc formats from the
// same task_struct must agree for every thread.
func TestWalkMatchesProc(t *testing.T) {
	it, err := Open(Options{PIDs: []int{os.Getpid()}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	tidc := make(chan int)
	go func() {
		runtime.LockOSThread() // the thread exits with the goroutine
		tidc <- unix.Gettid()
		var b [1]byte
		unix.Read(p[0], b[:])
	}()
	tid := <-tidc
	var seen *Record
	for range 50 { // until the sleeper has gone to sleep
		n, err := it.Walk()
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			var r Record
			if err := it.Record(i, &r); err != nil {
				t.Fatal(err)
			}
			if r.PID != os.Getpid() {
				t.Errorf("thread %d of process %d is not the target's", r.TID, r.PID)
			}
			if r.TID == tid && StateLetter(r.State, r.ExitState) == 'S' {
				seen = &r
			}
		}
		if seen != nil {
			break
		}
		unix.Nanosleep(&unix.Timespec{Nsec: 2e6}, nil)
	}
	if seen == nil {
		t.Fatalf("the walk never reported thread %d asleep", tid)
	}
	dir := "/proc/self/task/" + strconv.Itoa(tid) + "/"
	read := func(f string) string {
		b, err := os.ReadFile(dir + f)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	status := map[string]string{}
	for _, l := range strings.Split(read("status"), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			status[k] = strings.TrimSpace(v)
		}
	}
	stat := strings.Fields(read("stat")[strings.LastIndexByte(read("stat"), ')')+2:])
	got := map[string]string{
		"schedstat":                  strconv.FormatUint(seen.RunNs, 10) + " " + strconv.FormatUint(seen.WaitNs, 10) + " " + strconv.FormatUint(seen.Timeslices, 10),
		"voluntary_ctxt_switches":    strconv.FormatUint(seen.VoluntarySwitches, 10),
		"nonvoluntary_ctxt_switches": strconv.FormatUint(seen.InvoluntarySwitches, 10),
		"State":                      string(StateLetter(seen.State, seen.ExitState)),
		"Cpus_allowed_list":          string(AppendCPUList(nil, seen.Mask, it.CPUs())),
		"comm":                       string(seen.Comm),
		"starttime":                  strconv.FormatUint(it.StartTicks(seen.StartNs), 10),
		"processor":                  strconv.Itoa(seen.CPU),
	}
	want := map[string]string{
		"schedstat":                  read("schedstat"),
		"voluntary_ctxt_switches":    status["voluntary_ctxt_switches"],
		"nonvoluntary_ctxt_switches": status["nonvoluntary_ctxt_switches"],
		"State":                      status["State"][:1],
		"Cpus_allowed_list":          status["Cpus_allowed_list"],
		"comm":                       read("comm"),
		"starttime":                  stat[22-3], // fields counted from 1, the state is field 3
		"processor":                  stat[39-3],
	}
	unix.Write(p[1], []byte{1})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a sleeping thread, /proc vs the walk (-want +got)\n%s", diff)
	}
}

// TestWalkGrowsItsArray starts with room for 16 records on a host with
// more threads: the walk must reload a larger array and report them all.
func TestWalkGrowsItsArray(t *testing.T) {
	it, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.load(16); err != nil {
		t.Fatal(err)
	}
	n, err := it.Walk()
	if err != nil {
		t.Fatal(err)
	}
	if n <= 16 || it.capacity < n {
		t.Fatalf("walked %d threads with room for %d; want more than 16, all held", n, it.capacity)
	}
	self := 0
	for i := range n {
		var r Record
		if err := it.Record(i, &r); err != nil {
			t.Fatal(err)
		}
		if r.PID == os.Getpid() {
			self++
		}
	}
	if self == 0 {
		t.Errorf("this process's threads are not among the %d", n)
	}
}

// TestChangedRejects: the changed list is read from a map any root process
// may write, so a count or an index out of order or range is an error.
func TestChangedRejects(t *testing.T) {
	list := func(words ...uint64) []byte {
		b := make([]byte, 8*8)
		for i, w := range words {
			binary.LittleEndian.PutUint64(b[8*i:], w)
		}
		return b
	}
	it := &Iter{capacity: 7, changed: list(3, 0, 2, 6)}
	got, err := it.Changed(nil, 7)
	if err != nil || !slices.Equal(got, []int32{0, 2, 6}) {
		t.Errorf("Changed = %v, %v; want [0 2 6]", got, err)
	}
	for name, b := range map[string][]byte{
		"count over n":       list(8, 0, 1, 2, 3, 4, 5, 6),
		"index at n":         list(1, 7),
		"index repeated":     list(2, 3, 3),
		"out of order":       list(2, 4, 1),
		"huge index":         list(1, 1<<63),
		"count past the end": list(1 << 40),
	} {
		it.changed = b
		if _, err := it.Changed(nil, 7); !errors.Is(err, ErrRecord) {
			t.Errorf("%s: err = %v, want ErrRecord", name, err)
		}
	}
}

// TestWalkRewritesOnlyWhatMoved: the first walk lists every record it
// wrote, which is all of them; a later walk over this process's threads
// lists the thread that runs the walks, which ran since the walk before,
// and in time leaves out a thread asleep in a pipe read all the while.
func TestWalkRewritesOnlyWhatMoved(t *testing.T) {
	it, err := Open(Options{PIDs: []int{os.Getpid()}})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	tidc := make(chan int)
	go func() {
		runtime.LockOSThread()
		tidc <- unix.Gettid()
		var b [1]byte
		unix.Read(p[0], b[:])
	}()
	tid := <-tidc
	defer unix.Write(p[1], []byte{1})
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self := unix.Gettid()
	var changed []int32
	for w := range 50 { // until a walk finds the sleeper asleep and unmoved
		unix.Nanosleep(&unix.Timespec{Nsec: 2e6}, nil)
		n, err := it.Walk()
		if err != nil {
			t.Fatal(err)
		}
		if changed, err = it.Changed(changed[:0], n); err != nil {
			t.Fatal(err)
		}
		if w == 0 {
			if len(changed) != n {
				t.Fatalf("the first walk listed %d records of %d, want all", len(changed), n)
			}
			continue
		}
		at, me := -1, -1
		var r Record
		for i := range n {
			if err := it.Record(i, &r); err != nil {
				t.Fatal(err)
			}
			switch r.TID {
			case tid:
				at = i
			case self:
				me = i
			}
		}
		if at < 0 || me < 0 {
			t.Fatalf("walk %d: sleeper %d at %d, walking thread %d at %d", w, tid, at, self, me)
		}
		if _, found := slices.BinarySearch(changed, int32(me)); !found {
			t.Fatalf("walk %d left out the record of thread %d, which ran the walk", w, self)
		}
		if _, found := slices.BinarySearch(changed, int32(at)); !found {
			return
		}
	}
	t.Errorf("every walk rewrote the record of thread %d, asleep", tid)
}
