package sampler

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/wait"
)

// Bounds of wait-reason sampling: between two refreshes the hottest
// blocking threads (at most WaitThreads of them, hot in the last snapshot
// with mostly voluntary switches) are looked at WaitLooks times, evenly
// spread over the interval; a thread that just became hot also gets up to
// firstLooks looks at the refresh itself. A look reads the thread's syscall
// file, its wchan when the thread is not running, and for a read- or
// write-like call the target of the fd it is blocked on: at most 3 reads
// and one readlink. So at most 10 × 8 + 3 × 8 = 104 looks per refresh. Nothing is armed
// while no thread is hot and blocking, so an idle host sees no extra
// wake-up.
const (
	WaitLooks   = 10
	WaitThreads = 8
	// firstLooks bounds the back-to-back looks at a thread that just
	// became hot (see Monitor.Next).
	firstLooks = 3
)

// waitSampler takes the looks. Its timer callback runs on a goroutine of
// its own (see lookTimer), so everything it touches is behind mu; the Monitor arms it
// after a refresh and collects its tallies at the next.
type waitSampler struct {
	mu      sync.Mutex
	rootFD  int
	timer   *lookTimer
	period  time.Duration
	looks   int
	targets []waitTarget

	path, buf, link, raw []byte
}

type waitTarget struct {
	pid, tid int
	// noSyscall is set once reading syscall was refused (another user's
	// thread without ptrace rights): wchan alone from then on.
	noSyscall bool
	tally     model.WaitTally
	wchan     []byte
	syscall   []byte
}

func newWaitSampler(rootFD int) *waitSampler {
	return &waitSampler{rootFD: rootFD, buf: make([]byte, 512), link: make([]byte, 256)}
}

// close stops the looks for good.
func (w *waitSampler) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Close()
		w.timer = nil
	}
	w.targets = w.targets[:0]
}

// collect stops the looks and appends what they found to dst, sorted by
// PID and TID.
func (w *waitSampler) collect(dst []model.WaitTally) []model.WaitTally {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	for i := range w.targets {
		t := &w.targets[i]
		if t.tally.Looks == 0 {
			continue
		}
		tally := t.tally
		tally.Wchan, tally.Syscall = string(t.wchan), string(t.syscall)
		dst = append(dst, tally)
	}
	w.targets = w.targets[:0]
	return sortWaits(dst)
}

func sortWaits(w []model.WaitTally) []model.WaitTally {
	slices.SortFunc(w, func(a, b model.WaitTally) int {
		if a.PID != b.PID {
			return a.PID - b.PID
		}
		return a.TID - b.TID
	})
	return w
}

// lookNow looks once at each hot blocking thread of snap (the first
// WaitThreads) that cur has no looks for, appending the tallies to
// cur.Waits. It reports whether it added any.
func (w *waitSampler) lookNow(snap *model.Snapshot, cur *model.Sample) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, added := 0, false
	for i := range snap.Threads {
		t := &snap.Threads[i]
		if n == WaitThreads {
			break
		}
		if !t.Hot || t.VoluntaryPerSec < t.InvoluntaryPerSec {
			continue
		}
		n++
		if t.WaitOn != nil || t.Wchan != "" || slices.ContainsFunc(cur.Waits, func(x model.WaitTally) bool { return x.TID == t.TID && x.PID == t.PID }) {
			continue
		}
		tg := waitTarget{pid: t.PID, tid: t.TID, tally: model.WaitTally{PID: t.PID, TID: t.TID}}
		// A busy thread is often on a CPU at the one moment looked at:
		// a few looks in a row, until one finds it asleep.
		for k := 0; k < firstLooks && len(tg.tally.Reasons) == 0; k++ {
			w.look(&tg)
		}
		if tg.tally.Looks > 0 {
			tg.tally.Wchan, tg.tally.Syscall = string(tg.wchan), string(tg.syscall)
			cur.Waits = append(cur.Waits, tg.tally)
			added = true
		}
	}
	return added
}

// arm picks the hot blocking threads of snap and schedules the looks over
// the next interval, taken to be as long as the last one.
func (w *waitSampler) arm(snap *model.Snapshot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.targets = w.targets[:0]
	for i := range snap.Threads {
		t := &snap.Threads[i]
		if len(w.targets) == WaitThreads {
			break
		}
		if t.Hot && t.VoluntaryPerSec >= t.InvoluntaryPerSec {
			w.targets = append(w.targets, waitTarget{pid: t.PID, tid: t.TID, tally: model.WaitTally{PID: t.PID, TID: t.TID}})
		}
	}
	if len(w.targets) == 0 || snap.Interval <= 0 {
		return
	}
	w.looks = 0
	w.period = snap.Interval / (WaitLooks + 1)
	if w.timer == nil {
		w.timer = newLookTimer(w.tick)
	}
	w.timer.Start(w.period)
}

func (w *waitSampler) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.targets) == 0 || w.looks >= WaitLooks {
		return
	}
	w.lookAll()
	w.looks++
	if w.looks < WaitLooks {
		w.timer.Again()
	} else {
		w.timer.Stop()
	}
}

// lookAll looks at every target once.
func (w *waitSampler) lookAll() {
	for i := range w.targets {
		w.look(&w.targets[i])
	}
}

func (w *waitSampler) look(t *waitTarget) {
	obs := wait.Observation{Syscall: wait.NoSyscall}
	var raw []byte
	if !t.noSyscall {
		n, err := w.read(t, "syscall")
		switch {
		case err == unix.EACCES || err == unix.EPERM:
			t.noSyscall = true
		case err != nil:
			return // gone: not a look
		default:
			sc, err := procfs.ParseTaskSyscall(w.buf[:n], "syscall")
			if err != nil {
				break
			}
			if sc.Running {
				t.tally.Looks++
				return
			}
			// Copied now: the wchan read below reuses the buffer.
			raw = append(w.raw[:0], trimSyscall(w.buf[:n])...)
			w.raw = raw
			obs.Syscall = sc.Number
			if wait.TakesFD(sc.Number) && sc.Args[0] < 1<<31 {
				obs.FD = w.fdKind(t.pid, int(sc.Args[0]))
			}
		}
	}
	n, err := w.read(t, "wchan")
	if err != nil && !t.noSyscall {
		return
	}
	if err == nil {
		if wc, err := procfs.ParseWchan(w.buf[:n], "wchan"); err == nil && len(wc) > 0 {
			obs.Wchan = string(wc)
			t.wchan = append(t.wchan[:0], wc...)
		}
	}
	t.tally.Looks++
	reason := wait.Reason(obs)
	if reason == "" {
		return
	}
	if raw != nil {
		t.syscall = append(t.syscall[:0], raw...)
	}
	for k := range t.tally.Reasons {
		if t.tally.Reasons[k].Reason == reason {
			t.tally.Reasons[k].N++
			return
		}
	}
	t.tally.Reasons = append(t.tally.Reasons, model.ReasonCount{Reason: reason, N: 1})
}

// trimSyscall keeps the number and the first three arguments of a syscall
// line: enough to see the call and its fd, without the stack addresses.
func trimSyscall(b []byte) []byte {
	fields := 0
	for i, c := range b {
		if c == ' ' || c == '\n' {
			fields++
			if fields == 4 || c == '\n' {
				return b[:i]
			}
		}
	}
	return b
}

func (w *waitSampler) read(t *waitTarget, file string) (int, error) {
	p := appendInt(w.path[:0], t.pid)
	p = append(p, "/task/"...)
	p = appendInt(p, t.tid)
	p = append(p, '/')
	p = append(p, file...)
	w.path = append(p, 0)
	return readFileAt(w.rootFD, w.path, &w.buf, procfs.LimitLine)
}

// fdKind resolves /proc/PID/fd/N; unknown when it cannot be read.
func (w *waitSampler) fdKind(pid, fd int) procfs.FDKind {
	p := appendInt(w.path[:0], pid)
	p = append(p, "/fd/"...)
	p = appendInt(p, fd)
	w.path = append(p, 0)
	n, err := readlinkat(w.rootFD, w.path, w.link)
	if err != nil {
		return procfs.FDUnknown
	}
	return procfs.ParseFDTarget(string(w.link[:n]))
}

// readlinkat is raw, as the other procfs reads are (see sys.go).
func readlinkat(dirfd int, path, buf []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
