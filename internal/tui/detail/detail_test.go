package detail

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func TestView(t *testing.T) {
	s := tuitest.Snapshot()
	var vol, invol []float64
	for i := range 50 {
		vol = append(vol, float64(1000+i*37%400))
		invol = append(invol, float64(i%7*50))
	}
	for _, sz := range tuitest.Sizes {
		t.Run(sz.Name, func(t *testing.T) {
			m := New(theme.New(false, true))
			m.SetSize(sz.Width, sz.Height-3)
			m.SetThread(s.Threads[2], true, vol, invol, s.Threads)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.Width, sz.Height-3)
			tuitest.Golden(t, sz.Name, got)
		})
	}
}

func TestOtherHotThreadsExcludeSelfAndOtherProcesses(t *testing.T) {
	s := tuitest.Snapshot()
	m := New(theme.New(true, true))
	m.SetSize(100, 30)
	var sib = s.Threads[2:5] // the java pool
	m.SetThread(s.Threads[2], false, nil, nil, sib)
	got := m.View()
	if strings.Count(got, "pool-1-thread-") != 3 { // title + two siblings
		t.Errorf("want the thread itself once and its two hot siblings:\n%s", got)
	}
	if strings.Contains(got, "pp-ping") {
		t.Errorf("another process's thread listed:\n%s", got)
	}
	if !strings.Contains(got, "did not run in the last interval") {
		t.Errorf("an idle thread's figures should be marked as last seen:\n%s", got)
	}
}

func TestViewWaitsAndCgroup(t *testing.T) {
	s := tuitest.WithCgroups()
	m := New(theme.New(false, true))
	m.SetSize(80, 21)
	m.SetThread(s.Threads[0], true, nil, nil, s.Threads)
	got := tuitest.Render(t, m.View(), colorprofile.Ascii)
	tuitest.CheckFits(t, got, 80, 21)
	tuitest.Golden(t, "80x21", got)
	for _, want := range []string{"waits on pipe read 80%, futex wait 20%", "wchan anon_pipe_read", "syscall 0 0x5", "cgroup pingpong.service (/system.slice/pingpong.service)"} {
		if !strings.Contains(ansi.Strip(got), want) {
			t.Errorf("missing %q:\n%s", want, got)
		}
	}
}

// An exited thread is marked gone, with when, its state "exited" and its
// rates 0, not its last figures as if it still ran; a whole process's exit
// names the process.
func TestViewOfExitedThread(t *testing.T) {
	s := tuitest.Snapshot()
	by := s.Time
	for _, c := range []struct {
		name    string
		exit    Exit
		now     time.Time
		want    []string
		notWant []string
	}{
		{
			name:    "alive",
			now:     by,
			want:    []string{"state S", "voluntary/s        2,310", "hot: blocking, wait 19%"},
			notWant: []string{"EXITED", "exited"},
		},
		{
			name: "thread",
			exit: Exit{After: by.Add(-time.Second), By: by},
			now:  by.Add(7 * time.Second),
			want: []string{"thread 911 pool-1-thread-1  of process 901 java  EXITED",
				"thread exited between 15:09:25.0 and 15:09:26.0 (7s ago); rates 0 since",
				"state exited", "%CPU 0.0", "wait 0.0%", "voluntary/s            0", "involuntary/s          0"},
			notWant: []string{"hot:", "2,310", "did not run"},
		},
		{
			name: "process",
			exit: Exit{After: by.Add(-5 * time.Second), By: by, Process: true},
			now:  by.Add(65 * time.Second),
			want: []string{"EXITED", "process 901 exited between 15:09:21 and 15:09:26 (1m5s ago)", "state exited"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := New(theme.New(true, true))
			m.SetSize(100, 30)
			m.SetThread(s.Threads[2], c.exit.Gone(), []float64{2310, 2200}, []float64{840, 800}, s.Threads)
			m.SetExit(c.exit, c.now)
			got := ansi.Strip(m.View())
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q:\n%s", w, got)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("shows %q:\n%s", w, got)
				}
			}
		})
	}
}

// A pod's thread names its pod, QoS class and container.
func TestViewContainer(t *testing.T) {
	s := tuitest.WithContainers()
	var th model.ThreadRates
	for _, x := range s.Threads {
		if x.Container != nil {
			th = x
			break
		}
	}
	if th.Container == nil {
		t.Fatal("no thread in a container")
	}
	m := New(theme.New(false, true))
	m.SetSize(100, 21)
	m.SetThread(th, true, nil, nil, s.Threads)
	got := ansi.Strip(tuitest.Render(t, m.View(), colorprofile.Ascii))
	tuitest.CheckFits(t, got, 100, 21)
	if want := "pod shop/checkout-7d9f8c-x2bq (burstable)  container payments-api containerd 3f1c2b4d5e6f"; !strings.Contains(got, want) {
		t.Errorf("missing %q:\n%s", want, got)
	}
}
