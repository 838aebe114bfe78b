package procfs

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseWchan(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{"function", "futex_wait_queue", "futex_wait_queue", false},
		{"newline", "pipe_read\n", "pipe_read", false},
		{"suffix", "do_epoll_wait.part.0", "do_epoll_wait.part.0", false},
		{"running or not permitted", "0", "", false},
		{"empty", "", "", false},
		{"escape sequence", "\x1b[2Jevil", "", true},
		{"space", "a b", "", true},
		{"leading digit", "1abc", "", true},
		{"too long", string(make([]byte, 200)), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWchan([]byte(tt.in), "wchan")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrParse) {
				t.Errorf("err %v does not wrap ErrParse", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseTaskSyscall(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    TaskSyscall
		wantErr bool
	}{
		{"futex", "202 0xc000180148 0x80 0x0 0x0 0x0 0x0 0x7ffd1b5c8a60 0x46e2c3\n",
			TaskSyscall{Number: 202, Args: [6]uint64{0xc000180148, 0x80}}, false},
		{"read fd 7", "0 0x7 0x7ffd 0x1 0x0 0x0 0x0 0x7ffd 0x4\n", TaskSyscall{Number: 0, Args: [6]uint64{7, 0x7ffd, 1}}, false},
		{"upper hex", "0 0xAB 0x0 0x0 0x0 0x0 0x0 0x0 0x0", TaskSyscall{Args: [6]uint64{0xab}}, false},
		{"running", "running\n", TaskSyscall{Running: true}, false},
		{"outside a call", "-1 0x7ffd1b5c8a60 0x46e2c3\n", TaskSyscall{Number: -1}, false},
		{"too few args", "202 0x1 0x2\n", TaskSyscall{}, true},
		{"no 0x", "202 1 2 3 4 5 6 7 8\n", TaskSyscall{}, true},
		{"bad hex", "202 0xzz 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n", TaskSyscall{}, true},
		{"hex overflow", "202 0x11112222333344445 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n", TaskSyscall{}, true},
		{"huge number", "99999999 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n", TaskSyscall{}, true},
		{"empty", "", TaskSyscall{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTaskSyscall([]byte(tt.in), "syscall")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestParseFDTarget(t *testing.T) {
	tests := map[string]FDKind{
		"pipe:[152131]":             FDPipe,
		"socket:[99]":               FDSocket,
		"anon_inode:[eventfd]":      FDEventFD,
		"anon_inode:[eventpoll]":    FDEventPoll,
		"anon_inode:[timerfd]":      FDAnonInode,
		"anon_inode:inotify":        FDAnonInode,
		"/dev/sda":                  FDPath,
		"/var/log/syslog (deleted)": FDPath,
		"net:[4026531840]":          FDUnknown,
		"":                          FDUnknown,
	}
	for in, want := range tests {
		if got := ParseFDTarget(in); got != want {
			t.Errorf("ParseFDTarget(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestParseTaskStackTop(t *testing.T) {
	tests := []struct {
		name, in, want string
		wantErr        bool
	}{
		{"hidden address", "[<0>] futex_do_wait+0x46/0x90\n[<0>] __futex_wait+0x8a/0x100\n", "futex_do_wait", false},
		{"address", "[<ffffffff8a1b2c3d>] anon_pipe_read+0x2f1/0x4a0\n", "anon_pipe_read", false},
		{"module", "[<0>] nfs_wait_bit_killable+0x1a/0x80 [nfs]\n", "nfs_wait_bit_killable", false},
		{"suffix", "[<0>] do_epoll_wait.part.0+0x4a/0x90\n", "do_epoll_wait.part.0", false},
		{"only the first line read", "[<0>] hrtimer_nanosleep+0x74/0xf0\n[<0>] __x64_sys_nano", "hrtimer_nanosleep", false},
		{"no frames", "", "", false},
		{"cut in the first frame", "[<0>] futex_do_wa", "", true},
		{"no offset", "[<0>] futex_do_wait\n", "", true},
		{"escape sequence", "[<0>] \x1b[2J+0x1/0x2\n", "", true},
		{"not hex", "[<zz>] f+0x1/0x2\n", "", true},
		{"no brackets", "futex_do_wait+0x46/0x90\n", "", true},
		{"empty name", "[<0>] +0x46/0x90\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTaskStackTop([]byte(tt.in), "stack")
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrParse) {
				t.Errorf("err %v does not wrap ErrParse", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
