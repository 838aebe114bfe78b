package waitreason

import (
	"testing"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// cases has at least one look per table row by system call and one by
// kernel function (the fallback when syscall is not readable);
// TestEveryEntryTested checks that.
var cases = []struct {
	name string
	obs  Observation
	want string
}{
	{"futex by call", Observation{Syscall: sysFutex, Wchan: "futex_do_wait"}, "futex wait"},
	{"futex by wchan (6.x)", Observation{Syscall: NoSyscall, Wchan: "futex_do_wait"}, "futex wait"},
	{"futex by wchan (5.x)", Observation{Syscall: NoSyscall, Wchan: "futex_wait_queue_me"}, "futex wait"},
	{"pipe read by fd", Observation{Syscall: sysRead, FD: procfs.FDPipe}, "pipe read"},
	{"pipe read by wchan", Observation{Syscall: NoSyscall, Wchan: "anon_pipe_read"}, "pipe read"},
	{"pipe write by fd", Observation{Syscall: sysWrite, FD: procfs.FDPipe}, "pipe write"},
	{"pipe write by wchan", Observation{Syscall: NoSyscall, Wchan: "pipe_write"}, "pipe write"},
	{"socket recv by read on a socket", Observation{Syscall: sysRead, FD: procfs.FDSocket}, "socket recv"},
	{"socket recv by call", Observation{Syscall: sysRecvfrom, FD: procfs.FDUnknown}, "socket recv"},
	{"socket recv by wchan", Observation{Syscall: NoSyscall, Wchan: "unix_stream_read_generic"}, "socket recv"},
	{"socket send by call", Observation{Syscall: sysSendmsg}, "socket send"},
	{"socket send by wchan", Observation{Syscall: NoSyscall, Wchan: "sk_stream_wait_memory"}, "socket send"},
	{"accept by call", Observation{Syscall: sysAccept4}, "socket accept"},
	{"accept by wchan", Observation{Syscall: NoSyscall, Wchan: "inet_csk_accept"}, "socket accept"},
	{"epoll by call", Observation{Syscall: sysEpollPwait}, "epoll wait"},
	{"epoll by wchan", Observation{Syscall: NoSyscall, Wchan: "do_epoll_wait"}, "epoll wait"},
	{"poll by call", Observation{Syscall: sysPpoll}, "poll"},
	{"poll by wchan", Observation{Syscall: NoSyscall, Wchan: "poll_schedule_timeout.constprop.0"}, "poll"},
	{"eventfd by fd", Observation{Syscall: sysRead, FD: procfs.FDEventFD, Wchan: "do_wait_intr_irq"}, "eventfd read"},
	{"eventfd by wchan", Observation{Syscall: NoSyscall, Wchan: "eventfd_read"}, "eventfd read"},
	{"sleep by call", Observation{Syscall: sysClockNanosleep}, "sleep"},
	{"sleep by wchan", Observation{Syscall: NoSyscall, Wchan: "hrtimer_nanosleep"}, "sleep"},
	{"I/O by read on a file", Observation{Syscall: sysPread64, FD: procfs.FDPath}, "I/O"},
	{"I/O by fsync", Observation{Syscall: sysFsync}, "I/O"},
	{"I/O by wchan", Observation{Syscall: NoSyscall, Wchan: "folio_wait_bit_common"}, "I/O"},
	{"child wait by call", Observation{Syscall: sysWait4}, "child wait"},
	{"child wait by wchan", Observation{Syscall: NoSyscall, Wchan: "do_wait"}, "child wait"},
	{"signal wait by call", Observation{Syscall: sysRtSigtimedwait}, "signal wait"},
	{"signal wait by wchan", Observation{Syscall: NoSyscall, Wchan: "do_sigtimedwait"}, "signal wait"},
	{"unknown call falls back to wchan", Observation{Syscall: 9999, Wchan: "anon_pipe_read"}, "pipe read"},
	{"read on a timerfd falls back to wchan", Observation{Syscall: sysRead, FD: procfs.FDAnonInode, Wchan: "timerfd_read_iter"}, "other: timerfd_read_iter"},
	{"other", Observation{Syscall: NoSyscall, Wchan: "msleep_interruptible"}, "other: msleep_interruptible"},
	{"running: nothing to count", Observation{Syscall: NoSyscall}, ""},
}

func TestReason(t *testing.T) {
	for _, c := range cases {
		if got := Reason(c.obs); got != c.want {
			t.Errorf("%s: Reason(%+v) = %q, want %q", c.name, c.obs, got, c.want)
		}
	}
}

func TestEveryEntryTested(t *testing.T) {
	byCall, byWchan := map[string]bool{}, map[string]bool{}
	for _, c := range cases {
		if c.obs.Syscall >= 0 {
			byCall[c.want] = true
		} else {
			byWchan[c.want] = true
		}
	}
	for _, e := range table {
		if !byCall[e.Reason] {
			t.Errorf("no test maps a system call to %q", e.Reason)
		}
		if !byWchan[e.Reason] {
			t.Errorf("no test maps a kernel function to %q", e.Reason)
		}
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"futex wait": "futex", "pipe read": "pipe", "pipe write": "pipe", "socket recv": "socket",
		"epoll wait": "epoll", "sleep": "sleep", "I/O": "I/O", "other: msleep": "msleep", "made up": "made up",
	} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTakesFD(t *testing.T) {
	for nr, want := range map[int]bool{sysRead: true, sysRecvmsg: true, sysWritev: true, sysFutex: false, sysNanosleep: false, -1: false} {
		if got := TakesFD(nr); got != want {
			t.Errorf("TakesFD(%d) = %v, want %v", nr, got, want)
		}
	}
}

// TestSwitched: the first frame of a runnable thread's kernel stack names
// its wait only where the table knows the function; preemption points
// name none, not an "other: ..." reason.
func TestSwitched(t *testing.T) {
	for fn, want := range map[string]string{
		"futex_do_wait":              "futex wait",
		"futex_wait_queue_me":        "futex wait",
		"anon_pipe_read":             "pipe read",
		"unix_stream_read_generic":   "socket recv",
		"do_epoll_wait":              "epoll wait",
		"hrtimer_nanosleep":          "sleep",
		"exit_to_user_mode_loop":     "",
		"irqentry_exit_to_user_mode": "",
		"__cond_resched":             "",
		"msleep_interruptible":       "",
		"":                           "",
	} {
		if got := Switched(fn); got != want {
			t.Errorf("Switched(%q) = %q, want %q", fn, got, want)
		}
	}
}
