package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// stuckFile is a FUSE file whose reads never return until released: what a
// hung FUSE or NFS mount under --proc does to a reader.
type stuckFile struct {
	fs.Inode
	entered chan struct{}
	release chan struct{}
}

func (f *stuckFile) Open(context.Context, uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (f *stuckFile) Getattr(_ context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = 64
	return 0
}

func (f *stuckFile) Read(ctx context.Context, _ fs.FileHandle, _ []byte, _ int64) (fuse.ReadResult, syscall.Errno) {
	select {
	case f.entered <- struct{}{}:
	default:
	}
	// A server hung on its backend that still honours the kernel's
	// interrupt (as lxcfs and sshfs do): the reader sees EINTR and may
	// retry. One that ignores it leaves the reader in D state, which no
	// program can leave, not even by SIGKILL.
	select {
	case <-ctx.Done():
		return nil, syscall.EINTR
	case <-f.release:
		return fuse.ReadResultData(nil), 0
	}
}

// taskDir serves one thread's files from the fixture, with schedstat stuck.
type taskDir struct {
	fs.Inode
	src   string
	stuck *stuckFile
}

func (d *taskDir) OnAdd(ctx context.Context) {
	for _, name := range []string{"comm", "stat", "status"} {
		b, err := os.ReadFile(filepath.Join(d.src, name))
		if err != nil {
			panic(err)
		}
		f := &fs.MemRegularFile{Data: b, Attr: fuse.Attr{Mode: 0o444}}
		d.AddChild(name, d.NewPersistentInode(ctx, f, fs.StableAttr{}), true)
	}
	d.AddChild("schedstat", d.NewPersistentInode(ctx, d.stuck, fs.StableAttr{}), true)
}

// mountStuckThread copies the fixture tree and mounts a FUSE file system
// over thread 101's directory whose schedstat read hangs.
func mountStuckThread(t *testing.T) (root string, stuck *stuckFile) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting FUSE without fusermount needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	root = t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join(testutil.RepoRoot(), "testdata", "proc"))); err != nil {
		t.Fatal(err)
	}
	stuck = &stuckFile{entered: make(chan struct{}, 1), release: make(chan struct{})}
	dir := filepath.Join(root, "100", "task", "101")
	src := filepath.Join(testutil.RepoRoot(), "testdata", "proc", "100", "task", "101")
	server, err := fs.Mount(dir, &taskDir{src: src, stuck: stuck}, &fs.Options{
		MountOptions: fuse.MountOptions{DirectMountStrict: true, FsName: "ctxtop-test", Name: "stuck"},
	})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		close(stuck.release)
		if err := server.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return root, stuck
}

// TestSignalEndsBatchWithAStuckRead: SIGTERM once could not end a batch run
// whose read of a --proc file never returned. Now it exits within a second,
// with one line on stderr and the status a shell gives a SIGTERM'd process.
func TestSignalEndsBatchWithAStuckRead(t *testing.T) {
	root, stuck := mountStuckThread(t)
	bin := testutil.Binary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "-b", "-d", "0.2", "--proc", root)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() {
				_ = cmd.Process.Kill()
			}()
			select {
			case <-stuck.entered:
			case err := <-done:
				t.Fatalf("ctxtop exited before reaching the stuck file: %v\n%s", err, stderr.String())
			case <-time.After(20 * time.Second):
				t.Fatal("ctxtop never read the stuck file")
			}
			// Let it settle into the read.
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("still running 10 s after %v", sig)
			}
			took := time.Since(start)
			// 500 ms of grace; the rest is a loaded test machine's slack.
			if took > time.Second {
				t.Errorf("exited %v after %v, want within a second", took, sig)
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("exit = %v, want status %d", err, 128+int(sig))
			}
			msg := stderr.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "ctxtop: ") || !strings.Contains(msg, unix.SignalName(sig)) {
				t.Errorf("stderr = %q, want one line naming the signal", msg)
			}
		})
	}
}

// TestSignalBetweenReportsIsAQuietStop: with nothing stuck, a signal ends
// batch mode at once and cleanly, as before: exit 0, no message.
func TestSignalBetweenReportsIsAQuietStop(t *testing.T) {
	bin := testutil.Binary(t)
	cmd := exec.Command(bin, "-b", "-d", "0.5", "--proc", filepath.Join(testutil.RepoRoot(), "testdata", "proc"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	// After the first report it waits for the next tick.
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stdout)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || stderr.Len() != 0 {
			t.Errorf("exit = %v, stderr = %q; want a clean stop", err, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5 s after SIGTERM")
	}
}
