package jvm

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// maxAnswer caps what is read of one answer: VM.flags is a few KB, and a
// JVM is not to make ctxtop hold an unbounded string.
const maxAnswer = 1 << 20

// Command runs one diagnostic command line in the JVM, as `jcmd PID LINE`
// does, and returns its output; line holds no NUL. It waits at most timeout for the JVM to
// start its attach listener and as long again for the answer.
//
// HotSpot's attach mechanism on Linux: a JVM that finds the file
// .attach_pidNSPID in its working directory (or /tmp) when it gets
// SIGQUIT starts listening on the socket /tmp/.java_pidNSPID, and answers
// a peer whose effective user and group are its own, or root, as its own
// user namespace sees them. So when ctxtop runs as root and the JVM does
// not, the file and the connection are made from a thread that has taken
// the JVM's credentials; that thread is never given back to the Go
// runtime, which would otherwise run other goroutines on it with them.
// Paths go through /proc/PID/root and /proc/PID/cwd, so a JVM in a
// container is reached in its own mount namespace, by its own PID.
func (p *Process) Command(line string, timeout time.Duration) (string, error) {
	me := os.Geteuid()
	become := me == 0 && (p.UID != 0 || p.GID != 0)
	if me != 0 && (me != p.UID || os.Getegid() != p.GID) {
		return "", fmt.Errorf("JVM %d runs as uid %d gid %d: attaching to it needs root or that user and group", p.PID, p.UID, p.GID)
	}
	type result struct {
		fd  int
		err error
	}
	ch := make(chan result, 1)
	go offMainThread(func() {
		// Never unlocked: the thread ends with this goroutine, whatever
		// credentials it took.
		runtime.LockOSThread()
		if become {
			if err := setThreadCreds(p.UID, p.GID); err != nil {
				ch <- result{-1, fmt.Errorf("JVM %d: taking its credentials: %w", p.PID, err)}
				return
			}
		}
		fd, err := p.attach(time.Now().Add(timeout))
		ch <- result{fd, err}
	})
	r := <-ch
	if r.err != nil {
		return "", r.err
	}
	f := os.NewFile(uintptr(r.fd), "attach")
	defer f.Close()
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	_ = unix.SetsockoptTimeval(r.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	_ = unix.SetsockoptTimeval(r.fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	// Protocol 1: the version, the operation and three arguments, each
	// ended by a NUL; jcmd passes its whole command line as the first.
	if _, err := io.WriteString(f, "1\x00jcmd\x00"+line+"\x00\x00\x00"); err != nil {
		return "", fmt.Errorf("JVM %d: sending %s: %w", p.PID, line, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxAnswer+1))
	if err != nil {
		if errors.Is(err, unix.EAGAIN) {
			return "", fmt.Errorf("JVM %d did not answer %s within %s", p.PID, line, timeout)
		}
		return "", fmt.Errorf("JVM %d: reading the answer to %s: %w", p.PID, line, err)
	}
	if len(b) > maxAnswer {
		return "", fmt.Errorf("JVM %d: the answer to %s is over %d bytes", p.PID, line, maxAnswer)
	}
	// The answer: the operation's status as a number on a line, then the
	// command's output (for a failed command, the exception).
	status, out, _ := strings.Cut(string(b), "\n")
	code, err := strconv.Atoi(strings.TrimSpace(status))
	if err != nil {
		return "", fmt.Errorf("JVM %d: %s: not an attach answer: %q", p.PID, line, firstLine(string(b)))
	}
	if code != 0 {
		return "", fmt.Errorf("JVM %d: %s failed: %s", p.PID, line, firstLine(out))
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return sanitize.Name(s[:min(len(s), 200)])
}

// offMainThread runs f on a thread other than the process's first. The
// runtime does not end that thread when a goroutine locked to it exits (it
// parks it for good), and its credentials are the ones /proc shows for
// the process: it must never take a JVM's.
func offMainThread(f func()) {
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		f() // still locked: f's thread is this one, and ends with it
		return
	}
	// The first thread is held here, so f's goroutine runs on another.
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	runtime.UnlockOSThread()
}

// setThreadCreds gives the calling thread, and it alone, uid and gid as
// every one of its IDs and no supplementary groups. The raw system calls
// act on one thread (libc's and Go's syscall.Setresuid change them all).
func setThreadCreds(uid, gid int) error {
	if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
		return e
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(gid), uintptr(gid), uintptr(gid)); e != 0 {
		return e
	}
	if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(uid), uintptr(uid), uintptr(uid)); e != 0 {
		return e
	}
	return nil
}

// attach returns a socket connected to the JVM's attach listener,
// starting the listener first if it is not up.
func (p *Process) attach(deadline time.Time) (int, error) {
	dir := filepath.Join(p.Proc, strconv.Itoa(p.PID))
	ns := strconv.Itoa(p.NSPID)
	sock := filepath.Join(dir, "root", "tmp", ".java_pid"+ns)
	if len(sock) >= len(unix.RawSockaddrUnix{}.Path) {
		return -1, fmt.Errorf("JVM %d: socket path %s is too long", p.PID, sock)
	}
	if fd, err := dial(sock); err == nil {
		return fd, nil
	}
	if err := p.checkLeftover(sock); err != nil {
		return -1, err
	}
	if !p.CatchesQuit {
		return -1, fmt.Errorf("JVM %d does not handle SIGQUIT (started with -Xrs?): not signalled, it would end", p.PID)
	}
	// The trigger file, in the JVM's working directory or else its /tmp.
	// O_EXCL|O_NOFOLLOW: never through a planted symlink, never truncating
	// a file; one that exists already is someone else's trigger.
	made, exists := "", false
	var errs []string
	for _, d := range []string{filepath.Join(dir, "cwd"), filepath.Join(dir, "root", "tmp")} {
		name := filepath.Join(d, ".attach_pid"+ns)
		fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
			made = name
			break
		}
		if err == unix.EEXIST {
			exists = true
			break
		}
		if err == unix.ENOENT || err == unix.ESRCH {
			if !alive(p.PID) {
				return -1, fmt.Errorf("JVM %d: %w", p.PID, ErrGone)
			}
		}
		errs = append(errs, err.Error())
	}
	if made == "" && !exists {
		return -1, fmt.Errorf("JVM %d: cannot create .attach_pid%s in its working directory or /tmp: %s", p.PID, ns, strings.Join(errs, "; "))
	}
	if made != "" {
		defer unix.Unlink(made)
	}
	if err := unix.Kill(p.PID, unix.SIGQUIT); err != nil {
		if err == unix.ESRCH {
			return -1, fmt.Errorf("JVM %d: %w", p.PID, ErrGone)
		}
		return -1, fmt.Errorf("JVM %d: SIGQUIT: %w", p.PID, err)
	}
	// The listener starts within milliseconds on an idle JVM, later on a
	// busy one or host: poll, sparser as the wait grows.
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		time.Sleep(delay)
		fd, err := dial(sock)
		if err == nil {
			return fd, nil
		}
		if !alive(p.PID) {
			return -1, fmt.Errorf("JVM %d: %w", p.PID, ErrGone)
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("JVM %d did not open its attach socket (started with -XX:+DisableAttachMechanism?): %w", p.PID, err)
		}
	}
}

// checkLeftover fails when sock exists but is not the JVM's: a file left
// by an earlier process that had this PID (one ended by SIGKILL does not
// remove its socket) and owned by another user. HotSpot sets its socket up
// under another name and renames it over this one, which the sticky /tmp
// refuses, so the JVM never listens and a wait for it would be in vain. A
// leftover of the JVM's own user is no obstacle, nor any file to a JVM run
// as root: the rename replaces it. A directory there stops every JVM.
// ctxtop does not remove the file: it is in the host's (or a container's)
// /tmp, and the user is told which one.
func (p *Process) checkLeftover(sock string) error {
	var st unix.Stat_t
	if err := unix.Lstat(sock, &st); err != nil {
		return nil // none: the JVM has not listened yet
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if !isDir && (int(st.Uid) == p.UID || p.UID == 0) {
		return nil // a rename by its owner or by root replaces it
	}
	return fmt.Errorf("JVM %d: /tmp/.java_pid%d (in its mount namespace) is uid %d's, left by an earlier process with this PID; "+
		"the JVM (uid %d) cannot replace it, so it cannot open its attach socket: remove that file and try again",
		p.PID, p.NSPID, st.Uid, p.UID)
}

func alive(pid int) bool {
	return unix.Kill(pid, 0) != unix.ESRCH
}

// dial connects a blocking stream socket to path. The peer's credentials
// are the calling thread's at connect.
func dial(path string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// PerfMap asks the JVM to write /tmp/perf-NSPID.map, naming every method
// its code cache holds now (Compiler.perfmap, JDK 17+; methods compiled
// later are not in it until it is asked again), and returns how many
// lines the file has.
func (p *Process) PerfMap(timeout time.Duration) (int, error) {
	if _, err := p.Command("Compiler.perfmap", timeout); err != nil {
		return 0, err
	}
	root := filepath.Join(p.Proc, strconv.Itoa(p.PID), "root")
	n, err := countLines(root, "/tmp/perf-"+strconv.Itoa(p.NSPID)+".map")
	if err != nil {
		return 0, fmt.Errorf("JVM %d: Compiler.perfmap answered, but: %w", p.PID, err)
	}
	return n, nil
}

// countLines counts the lines of path, resolved inside root (a file the
// JVM's user could replace by a symlink is not followed out of it).
func countLines(root, path string) (int, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	if err := procfs.CheckRegular(fd); err != nil {
		return 0, &os.PathError{Op: "open", Path: path, Err: err}
	}
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := f.Read(buf)
		for _, c := range buf[:k] {
			if c == '\n' {
				n++
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
