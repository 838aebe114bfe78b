package sampler

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// On the /proc path without the taskstats gate every thread's kept-open
// schedstat is pread each pass: 10,000 system calls a second at 10,000
// threads. In a multi-threaded process (every Go program) each of them
// takes a reference on the file and drops it again (fdget: an atomic
// increment and decrement on a shared cache line, 5-7% of a pass's
// samples), which the kernel skips for a thread whose file table no other
// thread shares. So the per-thread file work runs on one OS thread that
// has a file table of its own (unshare(CLONE_FILES)): filesThread.
//
// The rules that keep two tables safe in one process:
//
//   - The thread is locked to its goroutine and never unlocked, so no other
//     goroutine ever runs on it, and when the goroutine returns the thread
//     exits and the kernel drops its table.
//   - A file the sampler opens in a pass (schedstat, the main thread's stat,
//     the task directory, the files read and closed at once) is opened,
//     read and closed on that thread only: its number means nothing, or
//     another file, in the shared table. They are raw fds, never an
//     os.File, whose close could run on another goroutine.
//   - Files opened before the thread unshared (the procfs root, the
//     system-wide files, the Go runtime's epoll and eventfd) are in both
//     tables, the same open files under the same numbers: the thread reads
//     them but never closes one; the shared table's copy is closed by
//     Close as before, the thread's copy goes with the thread.
//   - The runtime's network poller is started before unshare: a garbage
//     collection the thread's allocations start polls it (and a timer
//     change may write its eventfd) from this thread, and the runtime
//     dies if the numbers it holds mean nothing here. Threads the runtime
//     creates while on a locked thread are cloned by its template thread,
//     not from this one, so no other thread inherits the private table.
//   - Nothing forks or executes from the thread.
//
// Only the /proc path without taskstats uses it: the walk's BPF objects
// and the taskstats socket may be opened or closed at any time by other
// code in the shared table, and with them a pass reads few threads anyway.
// A pass costs two extra thread wake-ups (the request and its answer):
// some two context switches a second for ctxtop itself at the default
// interval.
type filesThread struct {
	req  chan *Sampler
	done chan error
	// tid is the thread's ID: /proc/self/task/TID/fd lists its table.
	tid int
	// cleanup ends the thread if the Sampler is dropped without Close.
	cleanup runtime.Cleanup
}

// A request is the Sampler to work for, with s.ownOp saying what to do.
const (
	opReadTasks = iota
	opClose
)

// startFilesThread starts the private-table thread for s; it returns nil
// when unshare is refused (a seccomp filter, an old kernel), and the pass
// then runs on the caller's thread as before.
func startFilesThread(s *Sampler) *filesThread {
	// Starts the network poller if nothing has yet (a timer needs it).
	time.Sleep(time.Nanosecond)
	ft := &filesThread{req: make(chan *Sampler), done: make(chan error)}
	started := make(chan error)
	go ft.run(started, nil)
	if err := <-started; err != nil {
		return nil
	}
	// The thread holds ft, not s: a Sampler dropped unclosed becomes
	// garbage, and closing req then ends the thread and its files.
	ft.cleanup = runtime.AddCleanup(s, func(req chan *Sampler) { close(req) }, ft.req)
	return ft
}

// run serves requests on a thread of its own until Close. held, when set,
// is closed once the thread is locked.
func (ft *filesThread) run(started chan<- error, held chan<- struct{}) {
	runtime.LockOSThread() // for good: the thread ends with this goroutine
	if held != nil {
		close(held)
	}
	if unix.Gettid() == unix.Getpid() {
		// The main thread: the runtime never ends it (a locked
		// goroutine's exit parks it for good, table and all), and its
		// table is the one /proc/PID/fd shows. Another goroutine cannot
		// be scheduled on it while this one holds it: hand over.
		other := make(chan struct{})
		go ft.run(started, other)
		<-other
		runtime.UnlockOSThread()
		return
	}
	if err := unix.Unshare(unix.CLONE_FILES); err != nil {
		started <- err
		return
	}
	ft.tid = unix.Gettid()
	started <- nil
	for s := range ft.req {
		switch s.ownOp {
		case opReadTasks:
			ft.done <- s.readTasks()
		case opClose:
			s.closeTasks()
			ft.done <- nil
			return
		}
	}
}

// do runs op for s on the thread and waits for it.
func (ft *filesThread) do(s *Sampler, op int) error {
	s.ownOp = op
	ft.req <- s
	return <-ft.done
}

// close closes the files s opened on the thread and ends it.
func (ft *filesThread) close(s *Sampler) {
	ft.cleanup.Stop()
	ft.do(s, opClose)
}
