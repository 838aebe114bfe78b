package sampler

import (
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/polltimer"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/waitreason"
)

// Bounds of wait-reason sampling: between two refreshes the hottest
// blocking threads (at most WaitThreads of them, hot in the last snapshot
// with mostly voluntary switches) are looked at WaitLooks times, evenly
// spread over the interval; a thread that just became hot also gets up to
// firstLooks looks at the refresh itself. A look reads the thread's wchan;
// asleep, its syscall file and for a read- or write-like call the target
// of the fd it is blocked on; not asleep, as root, the first frame of its
// kernel stack (see look): at most 2 reads and one readlink. So at most
// 10 × 8 + 5 × 8 = 120 looks per refresh; the first interval, whose hot
// threads are found halfway through it, gets earlyLooks instead of
// WaitLooks. Nothing is armed while no thread
// is hot and blocking, so an idle host sees no extra wake-up.
//
// A thread is settled when the looks at it agree: its last asleep looks
// (at most WaitLooks, over any number of refreshes) all found one reason,
// and there are settleLooks of them, or runningLooks looks in all since it
// was last unsettled (a thread that is mostly on a CPU is seldom found
// asleep). From then on it is looked at only at the refresh, when the
// monitor is awake anyway, so a steady load costs no wake-up at all. Such a
// look reads wchan alone (one read, taken under the lock that wake-ups
// take, so it sees a sleeping thread whenever there is one) and, when it
// names the function of the last asleep look, counts the same reason; any
// other function gets a full look. Up to settledLooks rounds go over the
// settled threads until each is found asleep. A look that finds another
// reason unsettles the thread, and so do a change of its voluntary switch
// rate by more than unsettleRate times either way since it settled, and
// unsettleMisses refreshes in a row whose looks all found it running: the
// next interval spreads ten looks again. A settled thread's shares are
// counted over its last WaitLooks asleep looks (model.WaitTally.Settled),
// so one look at the refresh neither makes nor hides a reason; so are those
// of any thread none of whose looks in the interval found it asleep
// (fillAsleep). A changed rate unsettles a thread but keeps those looks.
//
// A thread that runningLooks looks found on a CPU or waiting for one, and
// none asleep (a ping-pong pinned to one CPU: each side is preempted by the
// other it has just woken, and hardly ever sleeps), is settled the same way:
// only the refresh's looks, until one finds it asleep. With no asleep look
// since it became hot it has nothing to say.
const (
	WaitLooks   = 10
	WaitThreads = 8
	// firstLooks bounds the back-to-back looks at a thread that just
	// became hot (see Monitor.Next).
	firstLooks = 3
	// earlyLooks are the looks of an interval whose hot threads were
	// found before it ended (armOver): the first, whose threads have no
	// asleep looks of earlier intervals to fall back on (fillAsleep).
	// Beside busy loops a side of a ping-pong was missed by all ten
	// spread looks in about one first report of forty.
	earlyLooks     = 2 * WaitLooks
	settleLooks    = 5
	settledLooks   = 5
	unsettleMisses = 10
	runningLooks   = 2 * WaitLooks
	unsettleRate   = 2
	coldRefreshes  = 3
)

// looker takes the looks. Its timer callback runs on a goroutine of
// its own (see polltimer), so everything it touches is behind mu; the Monitor arms it
// after a refresh and collects its tallies at the next.
type looker struct {
	mu     sync.Mutex
	rootFD int
	timer  *polltimer.Timer
	period time.Duration
	// looks counts the looks at the targets so far, up to limit.
	looks, limit int
	targets      []waitTarget
	// known is what the looks found of each hot blocking thread, kept
	// while it stays one of them.
	known map[taskKey]*threadWaits

	path, buf, link, raw []byte
	// noStack is set once reading a kernel stack was refused (not root):
	// looks at threads not asleep read the syscall file instead.
	noStack bool
}

type taskKey struct{ pid, tid int }

// settleKind is what a thread is settled on, if anything.
type settleKind int

const (
	unsettled settleKind = iota
	settledReason
	settledRunning
)

// threadWaits is what the looks found of one hot blocking thread over the
// refreshes it has been hot.
type threadWaits struct {
	// window holds the reasons of its last WaitLooks asleep looks, oldest
	// first.
	window []string
	// wchan and syscall are the raw function and call of its last asleep
	// look.
	wchan, syscall string
	settled        settleKind
	// looks counts the looks since it was last unsettled; running, those
	// in a row that found it running.
	looks, running int
	// volPerSec is its voluntary switch rate when it settled.
	volPerSec float64
	// misses counts the refreshes in a row in which it was settled and
	// every look found it running.
	misses int
	// cold counts the refreshes in a row it was not among the hot blocking
	// threads.
	cold int
}

// observe adds the asleep looks of a tally of looks at the thread to the
// window.
func (tw *threadWaits) observe(t *waitTarget) {
	for _, r := range t.tally.Reasons {
		for range r.N {
			if len(tw.window) == WaitLooks {
				tw.window = append(tw.window[:0], tw.window[1:]...)
			}
			tw.window = append(tw.window, r.Reason)
		}
	}
	if len(t.tally.Reasons) > 0 {
		// Compared first: a settled thread's look finds the same ones,
		// and the conversions in the comparisons do not allocate.
		if string(t.wchan) != tw.wchan {
			tw.wchan = string(t.wchan)
		}
		// A thread that woke between the wchan and the syscall read
		// left no call line: the last one read stands.
		if len(t.syscall) > 0 && string(t.syscall) != tw.syscall {
			tw.syscall = string(t.syscall)
		}
	}
}

// oneReason is the window's reason when every look in it found the same.
func (tw *threadWaits) oneReason() string {
	if len(tw.window) == 0 {
		return ""
	}
	for _, r := range tw.window[1:] {
		if r != tw.window[0] {
			return ""
		}
	}
	return tw.window[0]
}

// fillAsleep gives a tally whose looks all found the thread on a CPU or
// waiting for one the thread's last asleep looks of earlier intervals, as
// a settled thread's tally has. Each side of a busy ping-pong is asleep in
// only a few looks of ten, so an interval often finds one side never
// asleep while its twin was caught once: without this, identical threads
// showed "blocking: pipe 100%" and "blocking, wait 25%" side by side. The
// same holds for a thread settled as running with asleep looks before: 20
// looks in a row on a CPU are a few percent likely for such a side. The
// window goes when the thread cools down, so an old reason outlives no
// change of what it does, only unlucky looks; a thread never found asleep
// (a pair pinned to one CPU) still says nothing.
func (tw *threadWaits) fillAsleep(t *model.WaitTally) {
	if len(t.Reasons) > 0 || len(tw.window) == 0 {
		return
	}
	t.Reasons, t.Wchan, t.Syscall = tw.counts(), tw.wchan, tw.syscall
}

// counts is the window as reason counts, in order of first appearance.
func (tw *threadWaits) counts() []model.ReasonCount {
	var out []model.ReasonCount
	for _, r := range tw.window {
		if i := slices.IndexFunc(out, func(c model.ReasonCount) bool { return c.Reason == r }); i >= 0 {
			out[i].N++
		} else {
			out = append(out, model.ReasonCount{Reason: r, N: 1})
		}
	}
	return out
}

// update takes a tally of looks at the thread into tw and settles or
// unsettles it.
func (tw *threadWaits) update(t *waitTarget) {
	was := tw.settled
	before := tw.oneReason()
	tw.observe(t)
	tw.looks += t.tally.Looks
	if len(t.tally.Reasons) == 0 {
		tw.running += t.tally.Looks
	} else {
		tw.running = 0
	}
	switch was {
	case settledReason:
		switch {
		case len(t.tally.Reasons) == 0:
			if tw.misses++; tw.misses >= unsettleMisses {
				tw.settled, tw.looks = unsettled, 0
			}
		case tw.oneReason() != before:
			tw.settled, tw.looks = unsettled, 0
		default:
			tw.misses = 0
		}
		return
	case settledRunning:
		if len(t.tally.Reasons) > 0 {
			tw.settled, tw.looks = unsettled, 0
		}
		return
	}
	switch {
	case tw.oneReason() != "" && (len(tw.window) >= settleLooks || tw.looks >= runningLooks):
		tw.settled, tw.volPerSec, tw.misses = settledReason, t.volPerSec, 0
	case tw.running >= runningLooks:
		tw.settled, tw.volPerSec = settledRunning, t.volPerSec
	}
}

type waitTarget struct {
	pid, tid int
	// noSyscall is set once reading syscall was refused (another user's
	// thread without ptrace rights): wchan alone from then on.
	noSyscall bool
	tally     model.WaitTally
	wchan     []byte
	syscall   []byte
	// volPerSec is the thread's voluntary switch rate when armed.
	volPerSec float64
}

// knownOf is tw for the thread, made if new.
func (w *looker) knownOf(k taskKey) *threadWaits {
	tw := w.known[k]
	if tw == nil {
		tw = &threadWaits{}
		w.known[k] = tw
	}
	return tw
}

func newLooker(rootFD int) *looker {
	return &looker{rootFD: rootFD, buf: make([]byte, 512), link: make([]byte, 256), known: map[taskKey]*threadWaits{}}
}

// close stops the looks for good.
func (w *looker) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Close()
		w.timer = nil
	}
	w.targets = w.targets[:0]
	clear(w.known)
}

// collect stops the looks and appends what they found to dst, sorted by
// PID and TID.
func (w *looker) collect(dst []model.WaitTally) []model.WaitTally {
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
		tw := w.knownOf(taskKey{t.pid, t.tid})
		tw.update(t)
		tally := t.tally
		// An asleep look leaves its raw lines in tw; without one there
		// are none.
		tally.Wchan, tally.Syscall = tw.wchan, tw.syscall
		if len(tally.Reasons) == 0 {
			tally.Wchan, tally.Syscall = "", ""
		}
		tw.fillAsleep(&tally)
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

// hotBlocking returns the first WaitThreads hot blocking threads of snap:
// those whose waits are looked at. With early, for looks over the rest of
// an interval of which snap saw only the start, a hot thread with at
// least half as many voluntary switches as involuntary ones counts too: a
// side of a ping-pong on a busy host swings across the line between
// blocking and preempted from one half interval to the next, and one
// found preempted in the first half was left to the refresh's looks.
func hotBlocking(snap *model.Snapshot, early bool) (hot [WaitThreads]*model.ThreadRates, n int) {
	for i := range snap.Threads {
		if n == WaitThreads {
			break
		}
		if t := &snap.Threads[i]; t.HotBlocking() || early && t.Hot && 2*t.VoluntaryPerSec >= t.InvoluntaryPerSec {
			hot[n] = t
			n++
		}
	}
	return hot, n
}

// lookNow looks at each hot blocking thread of snap (the first
// WaitThreads) that cur has no looks for, a few times in a row until one
// finds it asleep, appending the tallies to cur.Waits: a thread that just
// became hot, or a settled one. It reports whether it added any.
func (w *looker) lookNow(snap *model.Snapshot, cur *model.Sample) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	var (
		tgs     [WaitThreads]waitTarget
		settled [WaitThreads]*threadWaits
	)
	m := 0
	hot, n := hotBlocking(snap, false)
	for _, t := range hot[:n] {
		// A thread with a tally in cur was looked at over the interval;
		// Compute gave it its waits from that tally.
		if slices.ContainsFunc(cur.Waits, func(x model.WaitTally) bool { return x.TID == t.TID && x.PID == t.PID }) {
			continue
		}
		tgs[m] = waitTarget{pid: t.PID, tid: t.TID, volPerSec: t.VoluntaryPerSec, tally: model.WaitTally{PID: t.PID, TID: t.TID}}
		if tw := w.known[taskKey{t.PID, t.TID}]; tw != nil && tw.settled != unsettled {
			settled[m] = tw
		}
		m++
	}
	// A busy thread is often on a CPU at the moment looked at: a few
	// rounds, each looking once at every thread not yet found asleep. Going
	// round the threads spaces one's looks apart, which matters for a
	// ping-pong pair: while one side sleeps the other runs.
	for k := range settledLooks {
		for j := range m {
			tg := &tgs[j]
			if len(tg.tally.Reasons) > 0 {
				continue
			}
			if tw := settled[j]; tw != nil {
				w.lookSettled(tg, tw)
			} else if k < firstLooks {
				w.look(tg)
			}
		}
	}
	added := false
	for j := range m {
		tg := &tgs[j]
		if tg.tally.Looks == 0 {
			continue
		}
		tw := w.knownOf(taskKey{tg.pid, tg.tid})
		wasReason := tw.settled == settledReason
		asleep := len(tg.tally.Reasons) > 0
		tw.update(tg)
		// tw keeps the raw lines of the last asleep look: this one's, or
		// for a settled thread an earlier one.
		if asleep || wasReason {
			tg.tally.Wchan, tg.tally.Syscall = tw.wchan, tw.syscall
		}
		if wasReason {
			tg.tally.Reasons, tg.tally.Settled = tw.counts(), true
		}
		tw.fillAsleep(&tg.tally)
		cur.Waits = append(cur.Waits, tg.tally)
		added = true
	}
	return added
}

// arm picks the hot blocking threads of snap that are not settled and
// schedules the looks over the next interval, taken to be as long as the
// last one.
func (w *looker) arm(snap *model.Snapshot) { w.armLooks(snap, snap.Interval, WaitLooks, false) }

// armOver is arm for an interval whose hot threads were found before it
// ended: earlyLooks looks spread over span, the rest of it.
func (w *looker) armOver(snap *model.Snapshot, span time.Duration) {
	w.armLooks(snap, span, earlyLooks, true)
}

// armLooks is arm with n looks spread over span, at hotBlocking(snap,
// early).
func (w *looker) armLooks(snap *model.Snapshot, span time.Duration, n int, early bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.targets = w.targets[:0]
	var keys [WaitThreads]taskKey
	hot, nHot := hotBlocking(snap, early)
	for i, t := range hot[:nHot] {
		k := taskKey{t.PID, t.TID}
		keys[i] = k
		if tw := w.known[k]; tw != nil && tw.settled != unsettled {
			if t.VoluntaryPerSec <= tw.volPerSec*unsettleRate && t.VoluntaryPerSec*unsettleRate >= tw.volPerSec {
				continue // looked at by lookNow at the next refresh
			}
			// It changed: spread looks again. Its last asleep looks stay:
			// a busy host's rates swing twofold while a thread keeps
			// blocking on the same thing, and forgetting them left it
			// without a reason its twin still showed (fillAsleep).
			tw.settled, tw.looks, tw.running, tw.misses = unsettled, 0, 0, 0
		}
		w.targets = append(w.targets, waitTarget{pid: t.PID, tid: t.TID, volPerSec: t.VoluntaryPerSec, tally: model.WaitTally{PID: t.PID, TID: t.TID}})
	}
	// A thread that cooled down, or fell out of the hottest, is forgotten
	// after coldRefreshes: one that dips below the threshold for a refresh
	// (a ping-pong side on a busy host) keeps its last asleep looks, so it
	// does not come back with no reason while its twin names one. It comes
	// back unsettled: its spread looks start again.
	for k, tw := range w.known {
		if slices.Contains(keys[:nHot], k) {
			tw.cold = 0
			continue
		}
		if tw.cold++; tw.cold > coldRefreshes {
			delete(w.known, k)
			continue
		}
		tw.settled, tw.looks, tw.running, tw.misses = unsettled, 0, 0, 0
	}
	if len(w.targets) == 0 || span <= 0 {
		return
	}
	w.looks, w.limit = 0, n
	w.period = span / time.Duration(n+1)
	if w.timer == nil {
		w.timer = polltimer.New(w.tick)
	}
	w.timer.Start(w.period)
}

func (w *looker) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.targets) == 0 || w.looks >= w.limit {
		return
	}
	w.lookAll()
	w.looks++
	if w.looks < w.limit {
		w.timer.Again()
	} else {
		w.timer.Stop()
	}
}

// lookAll looks at every target once.
func (w *looker) lookAll() {
	for i := range w.targets {
		w.look(&w.targets[i])
	}
}

// look takes one look at t. wchan comes first: the kernel reads it under
// the lock wake-ups take, so it names a function whenever the thread is
// asleep at that instant. The syscall file says less often: it answers
// only when the thread stays asleep for the whole read, and each side of
// a busy ping-pong sleeps a microsecond or two at a time, less than that
// read takes; beside busy loops one side was found asleep by it in none of
// 300 looks. A thread not asleep is often just woken and not yet run
// (runnable: wchan "0", syscall "running"), still in the function it slept
// in; its kernel stack says which (lookAwake).
func (w *looker) look(t *waitTarget) {
	n, err := w.read(t, "wchan")
	if err != nil {
		return // gone: not a look
	}
	wc, err := procfs.ParseWchan(w.buf[:n], "wchan")
	if err != nil {
		return
	}
	if len(wc) == 0 {
		w.lookAwake(t)
		return
	}
	// Copied now: the reads below reuse the buffer.
	t.wchan = append(t.wchan[:0], wc...)
	obs := waitreason.Observation{Syscall: waitreason.NoSyscall, Wchan: string(t.wchan)}
	raw := w.readSyscall(t, &obs)
	w.count(t, waitreason.Reason(obs), raw)
}

// readSyscall adds to obs the call t is blocked in and the kind of the fd
// it is blocked on, and returns the call's line, nil when there is none: a
// thread of another user, or one that has woken since its wchan was read,
// is known by its wchan alone.
func (w *looker) readSyscall(t *waitTarget, obs *waitreason.Observation) []byte {
	if t.noSyscall {
		return nil
	}
	n, err := w.read(t, "syscall")
	if err == unix.EACCES || err == unix.EPERM {
		t.noSyscall = true
	}
	if err != nil {
		return nil
	}
	sc, err := procfs.ParseTaskSyscall(w.buf[:n], "syscall")
	if err != nil || sc.Running {
		return nil
	}
	// Copied now: the readlink below reuses the path buffer, and a later
	// read the buffer.
	w.raw = append(w.raw[:0], trimSyscall(w.buf[:n])...)
	obs.Syscall = sc.Number
	if waitreason.TakesFD(sc.Number) && sc.Args[0] < 1<<31 {
		obs.FD = w.fdKind(t.pid, int(sc.Args[0]))
	}
	return w.raw
}

// lookAwake is a look at t, which was not asleep when its wchan was read.
// As root, the first frame of its kernel stack is the function it was
// last switched out in: a wait of the table counts as that reason (the
// thread was woken from it and waits for a CPU, or has just left it), any
// other function is a preemption and counts as running. Without the right
// to read stacks, the syscall file is read as before wchan was: a kernel
// that hides wchan still answers there.
func (w *looker) lookAwake(t *waitTarget) {
	if !w.noStack {
		fn, err := w.stackTop(t)
		switch {
		case err == unix.EACCES || err == unix.EPERM:
			w.noStack = true
		case err != nil:
			return // gone: not a look
		default:
			reason := ""
			if len(fn) > 0 {
				reason = waitreason.Switched(string(fn))
			}
			if reason != "" {
				t.wchan = append(t.wchan[:0], fn...)
			}
			w.count(t, reason, nil)
			return
		}
	}
	obs := waitreason.Observation{Syscall: waitreason.NoSyscall}
	raw := w.readSyscall(t, &obs)
	if raw == nil {
		t.tally.Looks++ // running, or nothing to say
		return
	}
	w.count(t, waitreason.Reason(obs), raw)
}

// count adds one look to t's tally, asleep on reason unless that is "";
// raw is its syscall line, if it has one.
func (w *looker) count(t *waitTarget, reason string, raw []byte) {
	t.tally.Looks++
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

// stackTop reads the first frame of t's kernel stack. One read of the
// buffer is enough: only the first line is wanted, and a deep stack runs
// to kilobytes.
func (w *looker) stackTop(t *waitTarget) ([]byte, error) {
	w.path = appendTaskPath(w.path[:0], t.pid, t.tid, "stack")
	fd, err := openFile(w.rootFD, w.path)
	if err != nil {
		return nil, err
	}
	n, err := preadRaw(fd, w.buf)
	closeFD(fd)
	if err != nil {
		return nil, err
	}
	return procfs.ParseTaskStackTop(w.buf[:n], "stack")
}

// lookSettled looks at a settled thread: its wchan alone when that names
// the function it was last found asleep in, a full look otherwise.
func (w *looker) lookSettled(t *waitTarget, tw *threadWaits) {
	n, err := w.read(t, "wchan")
	if err != nil {
		return // gone, or hidden: not a look
	}
	wc, err := procfs.ParseWchan(w.buf[:n], "wchan")
	if err != nil {
		return
	}
	if len(wc) == 0 {
		// Woken and waiting for a CPU, or on one: the stack says which.
		w.lookAwake(t)
		return
	}
	reason := tw.oneReason()
	if string(wc) != tw.wchan || reason == "" || tw.settled != settledReason {
		w.look(t)
		return
	}
	t.wchan = append(t.wchan[:0], wc...)
	t.syscall = append(t.syscall[:0], tw.syscall...)
	w.count(t, reason, nil)
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

func (w *looker) read(t *waitTarget, file string) (int, error) {
	w.path = appendTaskPath(w.path[:0], t.pid, t.tid, file)
	return readFileAt(w.rootFD, w.path, &w.buf, procfs.LimitLine)
}

// fdKind resolves /proc/PID/fd/N; unknown when it cannot be read.
func (w *looker) fdKind(pid, fd int) procfs.FDKind {
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

// readlinkat is raw, as the other procfs reads are (see rawcalls.go).
func readlinkat(dirfd int, path, buf []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
