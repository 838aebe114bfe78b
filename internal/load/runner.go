package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ChildCommand is the hidden subcommand this binary is re-executed with to
// run a workload process; the command line must hand what follows it to
// ChildMain.
const ChildCommand = "__load-child"

// The workload process finds its control pipe, result pipe and the shared
// progress memory at these fds.
const (
	runnerCtlFD = 3
	runnerResFD = 4
	runnerMemFD = 5
)

// The shared memory: a header line, then one counter per cache line.
const (
	memStart = 0  // CLOCK_MONOTONIC ns when the workload started
	memEnd   = 8  // ... when its last pair ended; 0 while running
	memSlots = 64 // first counter
)

// runnerMsg is one line from the workload process to ctxtop.
type runnerMsg struct {
	Error   string   `json:"error,omitempty"`
	Threads []Task   `json:"threads,omitempty"`
	PIDs    []int    `json:"pids,omitempty"`
	Ready   bool     `json:"ready,omitempty"`
	Summary *Summary `json:"summary,omitempty"`
}

// Run is one running workload. It runs in a process of its own (this
// binary, re-executed): its threads share nothing with the caller's Go
// runtime, so a monitor that starts a load stays as quiet as when idle,
// and the workload's runtime is set up for the job (collector off, raw
// blocking calls, no preemption signals). Its methods are safe from any
// goroutine.
type Run struct {
	cfg Config
	// units is cfg.units(), kept: Progress runs every frame and should not
	// look the mode up each time.
	units   int
	cmd     *exec.Cmd
	mem     []byte
	counts  []*atomic.Uint64
	ctl     *os.File
	threads []Task
	pids    []int
	cg      *cgroup

	done   chan struct{} // the workload process closed its result pipe
	waited chan struct{} // the workload process is reaped
	// final is the workload process's own summary, set before done closes.
	final *Summary

	stopOnce sync.Once
	summary  Summary

	mu     sync.Mutex
	win    [2]mark
	stderr bytes.Buffer
}

type mark struct {
	t time.Time
	n uint64
}

// startTimeout bounds the workload process's setup: a pool calibrates and
// starts up to MaxThreads threads, and a busy machine is slow (512 threads
// took 7 s to start on two CPUs at a load average of 400).
func startTimeout(cfg Config) time.Duration {
	return 30*time.Second + time.Duration(cfg.units())*20*time.Millisecond
}

// Start validates cfg and starts the workload in a process of its own; it
// returns once every side is set up (threads named and pinned), so an
// error there comes back from Start.
func Start(cfg Config) (*Run, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this executable to run the workload: %w", err)
	}
	r := &Run{cfg: cfg, units: cfg.units(), done: make(chan struct{}), waited: make(chan struct{})}
	if cfg.CPUQuota > 0 {
		if r.cg, err = newCgroup(cfg.CPUQuota); err != nil {
			return nil, err
		}
	}
	ok := false
	defer func() {
		if !ok {
			r.release()
		}
	}()
	memFile, err := r.mapMemory(r.units)
	if err != nil {
		return nil, err
	}
	defer memFile.Close()
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	r.ctl = ctlW
	cmd := exec.Command(exe, ChildCommand, "--runner")
	cmd.ExtraFiles = []*os.File{ctlR, resW, memFile}
	cmd.Env = runnerEnv(os.Environ())
	cmd.Stderr = &lockedWriter{mu: &r.mu, w: &r.stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	r.cmd = cmd
	started := make(chan error, 1)
	go r.startAndWait(started)
	err = <-started
	ctlR.Close()
	resW.Close()
	if err != nil {
		resR.Close()
		return nil, fmt.Errorf("starting the workload process %s: %w", exe, err)
	}
	if r.cg != nil {
		if err := r.cg.add(cmd.Process.Pid); err != nil {
			resR.Close()
			return nil, err
		}
	}
	ready := make(chan runnerMsg, 1)
	go r.readResults(resR, ready)
	b, _ := json.Marshal(cfg)
	if _, err := r.ctl.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("the workload process: %s", r.childErr(err))
	}
	select {
	case msg := <-ready:
		if msg.Error != "" {
			return nil, errors.New(msg.Error)
		}
		if !msg.Ready {
			<-r.waited
			return nil, fmt.Errorf("the workload process exited before starting: %s", r.childErr(nil))
		}
		r.threads, r.pids = msg.Threads, append([]int{cmd.Process.Pid}, msg.PIDs...)
	case <-time.After(startTimeout(cfg)):
		return nil, fmt.Errorf("the workload process did not start within %v", startTimeout(cfg))
	}
	now := time.Now()
	r.win = [2]mark{{t: now}, {t: now}}
	ok = true
	return r, nil
}

// startAndWait starts the workload process from a locked thread that lives
// until it is reaped: PR_SET_PDEATHSIG fires when the thread that forked
// it exits, and the runtime may retire an unlocked one.
func (r *Run) startAndWait(started chan<- error) {
	runtime.LockOSThread()
	err := r.cmd.Start()
	started <- err
	if err == nil {
		r.cmd.Wait()
	}
	close(r.waited)
}

// runnerEnv is the workload process's environment: its collector off
// (it allocates next to nothing after setup) and no preemption signals,
// which would interrupt the sides' blocking calls every 10 ms.
func runnerEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	godebug := "asyncpreemptoff=1"
	for _, kv := range env {
		switch {
		case strings.HasPrefix(kv, "GODEBUG="):
			if v := strings.TrimPrefix(kv, "GODEBUG="); v != "" {
				godebug = v + "," + godebug
			}
		case strings.HasPrefix(kv, "GOGC="), strings.HasPrefix(kv, "GOMAXPROCS="):
		default:
			out = append(out, kv)
		}
	}
	return append(out, "GODEBUG="+godebug, "GOGC=off")
}

// mapMemory makes the progress memory the workload process writes and
// this one reads: no system call, no wake-up on either side.
func (r *Run) mapMemory(units int) (*os.File, error) {
	size := memSlots + units*cacheLine
	fd, err := unix.MemfdCreate("ctxtop-load", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "ctxtop-load")
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("ftruncate: %w", err)
	}
	mem, counts, err := mapCounts(fd, size, units)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.mem, r.counts = mem, counts
	return f, nil
}

func mapCounts(fd, size, units int) ([]byte, []*atomic.Uint64, error) {
	mem, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap: %w", err)
	}
	counts := make([]*atomic.Uint64, units)
	for i := range counts {
		counts[i] = (*atomic.Uint64)(unsafe.Pointer(&mem[memSlots+i*cacheLine]))
	}
	return mem, counts, nil
}

func memWord(mem []byte, off int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&mem[off]))
}

// readResults reads the workload process's messages: the first (ready or
// an error) goes to ready, the summary is kept; done closes at the end of
// the pipe, when the process exits.
func (r *Run) readResults(f *os.File, ready chan<- runnerMsg) {
	defer close(r.done)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	first := true
	for sc.Scan() {
		var msg runnerMsg
		if json.Unmarshal(sc.Bytes(), &msg) != nil {
			continue
		}
		if first {
			first = false
			ready <- msg
			continue
		}
		if msg.Summary != nil {
			r.mu.Lock()
			r.final = msg.Summary
			r.mu.Unlock()
		}
	}
	if first {
		ready <- runnerMsg{}
	}
}

func (r *Run) childErr(err error) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := strings.TrimSpace(r.stderr.String())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		if err != nil {
			return err.Error()
		}
		s = "no message"
	}
	return s
}

// Done is closed when the run ends: its duration or round trips reached,
// the workload process gone, or after Stop.
func (r *Run) Done() <-chan struct{} { return r.done }

func (r *Run) total() uint64 {
	var n uint64
	for _, c := range r.counts {
		n += c.Load()
	}
	return n
}

// Progress is the run's live state; cheap enough to call every frame: it
// reads the shared counters and makes no system call.
func (r *Run) Progress() Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.total()
	pr := Progress{Config: r.cfg, RoundTrips: n, Threads: r.threads, PIDs: r.pids}
	pr.Config.CPUs = append([]int(nil), r.cfg.CPUs...)
	now := time.Now()
	if r.mem != nil {
		start, end := memWord(r.mem, memStart).Load(), memWord(r.mem, memEnd).Load()
		if start > 0 {
			if end == 0 {
				end = monoNanos()
			}
			pr.Elapsed = time.Duration(end - start)
		}
	}
	if now.Sub(r.win[1].t) >= time.Second {
		r.win[0], r.win[1] = r.win[1], mark{t: now, n: n}
	}
	from := r.win[0]
	if n > from.n {
		pr.NsPerRoundTrip = float64(now.Sub(from.t).Nanoseconds()) * float64(r.units) / float64(n-from.n)
	}
	return pr
}

// stopTimeout is how long Stop waits for the workload process's own
// summary before killing it; a pool of thousands of threads takes a while
// to read its counters.
const stopTimeout = 5 * time.Second

// Stop ends the run, waits for the workload process, and returns the
// summary. Every later call returns the same summary.
func (r *Run) Stop() Summary {
	r.stopOnce.Do(func() {
		r.ctl.Close() // the workload process stops at the end of this pipe
		select {
		case <-r.done:
		case <-time.After(stopTimeout):
			r.cmd.Process.Kill()
			<-r.done
		}
		<-r.waited
		r.mu.Lock()
		final := r.final
		r.mu.Unlock()
		if final != nil {
			r.summary = *final
		} else {
			r.summary = r.partial()
		}
		if r.cg != nil {
			r.cg.summarize(&r.summary)
		}
		r.release()
	})
	return r.summary
}

// partial is what is known here of a run whose process ended without its
// summary: the round trips, not the kernel's counts.
func (r *Run) partial() Summary {
	p := r.Progress()
	s := Summary{Mode: r.cfg.Mode, CPUs: append([]int{}, r.cfg.CPUs...), Pairs: r.cfg.Pairs, DurationS: p.Elapsed.Seconds(),
		Err: "the workload process ended without a summary: " + r.childErr(errors.New("killed")),
		// Only the workload process reads its threads' counters, at its end.
		SwitchesUnknown: "the workload process ended before reading its threads' counters"}
	info := r.cfg.Mode.Info()
	*info.count(&s) = p.RoundTrips
	if info.figures != nil {
		info.figures(&s, r.cfg, p.Elapsed.Seconds(), nil)
	}
	if s.RoundTrips > 0 {
		s.NsPerRoundTrip = float64(p.Elapsed.Nanoseconds()) * float64(s.Pairs) / float64(s.RoundTrips)
	}
	return s
}

// release frees what Start made; the workload process must be gone or
// going (it is killed).
func (r *Run) release() {
	if r.cmd != nil && r.cmd.Process != nil {
		select {
		case <-r.waited:
		default:
			r.cmd.Process.Kill()
			<-r.waited
		}
	}
	if r.ctl != nil {
		r.ctl.Close()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mem != nil {
		// Progress may still be called after Stop: keep its figures.
		n, start, end := r.total(), memWord(r.mem, memStart).Load(), memWord(r.mem, memEnd).Load()
		unix.Munmap(r.mem)
		r.mem = make([]byte, memSlots+cacheLine)
		memWord(r.mem, memStart).Store(start)
		memWord(r.mem, memEnd).Store(max(end, start))
		c := (*atomic.Uint64)(unsafe.Pointer(&r.mem[memSlots]))
		c.Store(n)
		r.counts = []*atomic.Uint64{c}
	}
	if r.cg != nil {
		r.cg.remove()
	}
}

// runRunner is the workload process: it reads its Config from the control
// pipe, runs it, reports its threads, and writes the summary when the run
// ends or the control pipe closes (Stop, or ctxtop gone).
func runRunner() error {
	for _, fd := range []int{runnerCtlFD, runnerResFD, runnerMemFD} {
		// A process-mode partner must not inherit them: ctxtop would not
		// see the result pipe close when this process exits.
		unix.CloseOnExec(fd)
	}
	debug.SetGCPercent(-1)
	// Ctrl-C, a hang-up and a SIGTERM to the group (timeout, a service
	// manager) reach the whole process group; ctxtop stops the run and needs
	// this process's summary when it does. A SIGTERM for this process alone
	// ends the run as ctxtop's Stop does, summary included.
	signal.Ignore(os.Interrupt, syscall.SIGHUP)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	ctl := bufio.NewReader(os.NewFile(runnerCtlFD, "ctl"))
	res := os.NewFile(runnerResFD, "res")
	send := func(m runnerMsg) {
		b, _ := json.Marshal(m)
		res.Write(append(b, '\n'))
	}
	line, err := ctl.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("reading the workload's configuration: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(line, &cfg); err != nil {
		return fmt.Errorf("reading the workload's configuration: %w", err)
	}
	if err := cfg.normalize(); err != nil {
		send(runnerMsg{Error: err.Error()})
		return nil
	}
	runtime.GOMAXPROCS(runnerProcs(cfg))
	var st unix.Stat_t
	if err := unix.Fstat(runnerMemFD, &st); err != nil {
		return fmt.Errorf("shared memory: %w", err)
	}
	mem, counts, err := mapCounts(runnerMemFD, int(st.Size), cfg.units())
	if err != nil {
		return err
	}
	r, err := startLocal(cfg, counts)
	if err != nil {
		send(runnerMsg{Error: err.Error()})
		return nil
	}
	memWord(mem, memStart).Store(r.startNs)
	threads, pids := r.tasks()
	send(runnerMsg{Ready: true, Threads: threads, PIDs: pids})
	stop := make(chan struct{})
	go func() {
		ctl.ReadByte() // nothing more is sent: this returns at the end
		close(stop)
	}()
	select {
	case <-r.Done():
	case <-stop:
	case <-term:
	}
	s := r.Stop()
	memWord(mem, memEnd).Store(max(r.endNanos.Load(), r.startNs))
	send(runnerMsg{Summary: &s})
	return nil
}

// runnerProcs is the workload process's GOMAXPROCS: one P for every thread
// that blocks (or spins) holding one, and two for everything else (the
// control pipe, the duration timer). Goroutine mode takes what it is given.
func runnerProcs(cfg Config) int {
	info := cfg.Mode.Info()
	if info.Goroutines {
		if cfg.GoMaxProcs > 0 {
			return cfg.GoMaxProcs
		}
		return runtime.GOMAXPROCS(0)
	}
	return info.threadsPerUnit*cfg.units() + 2
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 4096 {
		return len(b), nil
	}
	return l.w.Write(b)
}
