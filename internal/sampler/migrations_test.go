package sampler

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
)

// TestMigrationsOfAThreadThatMoves has a thread move itself between CPU 0
// and 1 by changing its affinity, counting the moves it sees, while parked
// and pinned around both passes so that nothing else moves it. The row's
// MIGR/s over the thread's own interval must give back the kernel's count,
// read by the test just before the first pass and just after the second,
// and that count must be the thread's own.
func TestMigrationsOfAThreadThatMoves(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	if _, ok := schedMigrations(t, unix.Gettid()); !ok {
		t.Skip("no se.nr_migrations in sched (kernel without CONFIG_SCHED_DEBUG)")
	}
	const moves = 200 // even: the thread ends where it started, on CPU 0
	tidc, start, done := make(chan int), make(chan struct{}), make(chan error)
	release := make(chan struct{})
	defer close(release)
	go func() {
		// Never unlocked: the thread exits with the goroutine, its
		// affinity with it; it lives until the test has read it.
		runtime.LockOSThread()
		defer func() { <-release }()
		if err := pin(0); err != nil {
			tidc <- -1
			return
		}
		tidc <- unix.Gettid()
		<-start
		seen := 0
		for i := range moves {
			cpu := (i + 1) % 2
			if err := pin(cpu); err != nil {
				done <- err
				return
			}
			// sched_setaffinity moves a running caller before it
			// returns: it runs on the new CPU now.
			if here, err := getcpu(); err == nil && here == cpu {
				seen++
			}
		}
		if seen != moves {
			done <- fmt.Errorf("saw itself on the new CPU after %d of %d moves", seen, moves)
			return
		}
		done <- nil
	}()
	tid := <-tidc
	if tid < 0 {
		t.Skip("cannot pin a thread to CPU 0 here")
	}
	s := newSampler(t, Config{Root: "/proc", PIDs: []int{os.Getpid()}, NoCgroups: true})
	var a, b model.Sample
	k0, ok0 := schedMigrations(t, tid)
	if err := s.Sample(&a); err != nil {
		t.Fatal(err)
	}
	close(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := s.Sample(&b); err != nil {
		t.Fatal(err)
	}
	k1, ok1 := schedMigrations(t, tid)
	if !ok0 || !ok1 {
		t.Fatalf("could not read thread %d's sched file before (%v) or after (%v)", tid, ok0, ok1)
	}
	if k1-k0 < moves || k1-k0 > moves+2 {
		t.Errorf("kernel counted %d moves, the thread made %d", k1-k0, moves)
	}

	snap := model.Compute(&a, &b, model.Options{})
	var row *model.ThreadRates
	for i := range snap.Threads {
		if snap.Threads[i].TID == tid {
			row = &snap.Threads[i]
		}
	}
	if row == nil {
		t.Fatalf("no row for the moving thread %d", tid)
	}
	span := b.Time.Sub(a.Time) + readAt(&b, tid) - readAt(&a, tid)
	if got := row.PerSec[model.Migrations] * span.Seconds(); math.Abs(got-float64(k1-k0)) > 0.01 {
		t.Errorf("MIGR/s %.2f over %v is %.2f moves, the kernel counted %d", row.PerSec[model.Migrations], span, got, k1-k0)
	}
}

func pin(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}

func getcpu() (int, error) {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return 0, e
	}
	return int(cpu), nil
}

func schedMigrations(t *testing.T, tid int) (uint64, bool) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/sched", os.Getpid(), tid))
	if err != nil {
		return 0, false
	}
	return procfs.ParseTaskSchedMigrations(b)
}

func readAt(s *model.Sample, tid int) (d time.Duration) {
	for i := range s.Tasks {
		if s.Tasks[i].TID == tid {
			return s.Tasks[i].ReadAt
		}
	}
	return 0
}
