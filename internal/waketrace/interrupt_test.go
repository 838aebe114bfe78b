package waketrace

import (
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
)

// startTimerSleeper runs a thread of this process on cpu that sleeps 1 ms
// (nanosleep) and wakes, over and over, until the test ends; nothing but
// its timer wakes it. It returns the thread's TID.
func startTimerSleeper(t *testing.T, cpu int) int {
	t.Helper()
	tid := make(chan int)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Never unlocked: the thread, pinned, ends with the goroutine
		// rather than going back to run others (and fork children) on
		// one CPU.
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			tid <- -1
			return
		}
		tid <- unix.Gettid()
		ts := unix.NsecToTimespec(time.Millisecond.Nanoseconds())
		for {
			select {
			case <-stop:
				return
			default:
			}
			unix.Nanosleep(&ts, nil)
		}
	}()
	id := <-tid
	if id < 0 {
		t.Fatalf("cannot pin the sleeper to CPU %d", cpu)
	}
	t.Cleanup(func() {
		close(stop)
		<-done
	})
	return id
}

// startHog runs a shell spinning on cpu until the test ends.
func startHog(t *testing.T, cpu int) int {
	t.Helper()
	hog := exec.Command("taskset", "-c", strconv.Itoa(cpu), "sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hog.Process.Kill()
		hog.Wait()
	})
	return hog.Process.Pid
}

// TestTimerWakeupsAreTheTimers: a thread woken by its own timer is woken
// by the timer interrupt, whatever ran on the CPU when it fired: not by a
// CPU hog that was interrupted (what current is then), nor by the idle
// task when the CPU had nothing else to run.
func TestTimerWakeupsAreTheTimers(t *testing.T) {
	tr := needTracer(t)
	for _, tc := range []struct {
		name string
		hog  bool
	}{
		{"beside a hog", true},
		{"no hog", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const cpu = 0
			hog := -1
			if tc.hog {
				hog = startHog(t, cpu)
			}
			sleeper := startTimerSleeper(t, cpu)
			time.Sleep(100 * time.Millisecond)
			var s model.WakeupSample
			if err := tr.Read(&s); err != nil { // drop what came before
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			if err := tr.Read(&s); err != nil {
				t.Fatal(err)
			}
			var all, timer uint64
			for _, p := range s.Pairs {
				if p.WakeeTID != sleeper {
					continue
				}
				all += p.Wakeups
				t.Logf("%d %q (pid %d) → sleeper: %d", p.WakerTID, p.WakerComm, p.WakerPID, p.Wakeups)
				if p.WakerTID == model.WakerTimer && p.WakerComm == model.WakerTimerComm {
					timer += p.Wakeups
				}
				if p.WakerPID == hog {
					t.Errorf("the hog (pid %d, %q) woke the sleeper %d times", hog, p.WakerComm, p.Wakeups)
				}
			}
			// Some 1,000 timer expiries a second; a loaded host delays
			// some, which only makes fewer.
			if all < 100 {
				t.Fatalf("the sleeper was woken %d times in a second, want hundreds", all)
			}
			if timer < all*9/10 {
				t.Errorf("%d of the sleeper's %d wake-ups from the timer pseudo-waker (TID %d), want (nearly) all", timer, all, model.WakerTimer)
			}
		})
	}
}
