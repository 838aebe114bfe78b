package procfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestReadFileRefusesTraps(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", LimitLine+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{fifo, ErrNotRegular},
		{dir, ErrNotRegular},
		{loop, unix.ELOOP},
		{zero, unix.ELOOP},
		{"/dev/zero", ErrNotRegular},
		{big, ErrTooLarge},
		{filepath.Join(dir, "missing"), os.ErrNotExist},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := ReadFile(tc.path, LimitLine)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, tc.want) {
				t.Errorf("ReadFile(%s): err = %v, want %v", filepath.Base(tc.path), err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) blocked", tc.path)
		}
	}
}

func TestReadFileAtTheLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	want := strings.Repeat("0123456789", 1000)[:LimitLine]
	if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(p, LimitLine)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

func TestParseCommBounds(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ping-futex\n", "ping-futex"},
		{strings.Repeat("a", 100) + "\n", strings.Repeat("a", MaxComm)},
		// The cut at 64 bytes falls inside the 22nd 3-byte character.
		{strings.Repeat("长", 30), strings.Repeat("长", 21)},
		// A byte that was never valid stays for sanitize to replace.
		{strings.Repeat("a", 63) + "\xff\xff", strings.Repeat("a", 63) + "\xff"},
	} {
		if diff := cmp.Diff(tc.want, string(ParseComm([]byte(tc.in)))); diff != "" {
			t.Errorf("ParseComm(%.20q…) (-want +got)\n%s", tc.in, diff)
		}
	}
}
