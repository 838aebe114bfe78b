package load

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ModeProcess: two processes over a pair of pipes (perf bench sched pipe).
const ModeProcess Mode = "process"

func processInfo() Info {
	return Info{
		Mode:    ModeProcess,
		Title:   "two processes passing a byte over pipes",
		Help:    "two processes over a pair of pipes (perf bench sched pipe)",
		MaxCPUs: 2, Walks: true, Bench: true,
		// The partner process holds the other side.
		Unit: roundTrip(), count: roundTrips, threadsPerUnit: 1,
		prepare: func(cfg Config) unitMaker {
			return func(p *pair) (pairImpl, error) { return newProcessPair(cfg, p) }
		},
	}
}

// childFD and parentFD are where the child finds its pipe ends.
const (
	childReadFD  = 3
	childWriteFD = 4
)

// processPair is perf bench sched pipe: this process pings a child process
// over two pipes. The child is forked from the ping thread itself, which
// lives until the child is reaped: PR_SET_PDEATHSIG fires when the thread
// that forked the child exits, not the process, so forking from a thread
// the runtime may retire would kill the child early.
type processPair struct {
	p    *pair
	cpus []int
	// ws[0] is ping's working set; the child keeps its own, and reports
	// only its hot walk time, as ws[1].
	sideSets
	// toChild is the write end of the child's stdin-like pipe, fromChild
	// the read end of its answers; -1 once closed.
	toChild, fromChild int
	child              thread

	mu         sync.Mutex
	childFinal bool // the child's final counters are read
	cmd        *exec.Cmd
	waited     chan struct{}
	stderr     bytes.Buffer
}

func newProcessPair(cfg Config, p *pair) (*processPair, error) {
	return &processPair{p: p, cpus: cfg.CPUs, sideSets: sideSets{size: cfg.WorkingSet}, toChild: -1, fromChild: -1}, nil
}

func (pp *processPair) sides() []sideSpec {
	return []sideSpec{{
		name:   threadName("ping", ModeProcess),
		cpu:    sideCPU(pp.cpus, 0),
		setup:  pp.startChild,
		body:   pp.ping,
		finish: pp.stopChild,
		other:  &pp.child,
	}}
}

// startChild runs on the locked ping thread: it forks the child, waits for
// it to report its thread ID, and reads that thread's starting counters.
func (pp *processPair) startChild() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("process mode: finding this executable: %w", err)
	}
	var toChild, fromChild [2]int
	if err := unix.Pipe2(toChild[:], unix.O_CLOEXEC); err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	if err := unix.Pipe2(fromChild[:], unix.O_CLOEXEC); err != nil {
		unix.Close(toChild[0])
		unix.Close(toChild[1])
		return fmt.Errorf("pipe: %w", err)
	}
	childR := os.NewFile(uintptr(toChild[0]), "load-child-r")
	childW := os.NewFile(uintptr(fromChild[1]), "load-child-w")
	pp.ws[0] = newWorkingSet(pp.size)
	cmd := exec.Command(exe, ChildCommand, "--cpu", strconv.Itoa(sideCPU(pp.cpus, 1)), "--working-set", strconv.FormatInt(pp.size, 10))
	cmd.ExtraFiles = []*os.File{childR, childW} // fds 3 and 4
	cmd.Stderr = &lockedWriter{mu: &pp.mu, w: &pp.stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	// The child holds its own copies; ours must go, so that each side sees
	// end of file when the other is gone.
	childR.Close()
	childW.Close()
	pp.toChild, pp.fromChild = toChild[1], fromChild[0]
	if err != nil {
		return fmt.Errorf("process mode: starting %s %s: %w", exe, ChildCommand, err)
	}
	pp.mu.Lock()
	pp.cmd, pp.waited = cmd, make(chan struct{})
	pp.mu.Unlock()
	go func() {
		cmd.Wait()
		close(pp.waited)
	}()

	// The child's thread ID, then its hot walk time in nanoseconds.
	var buf [12]byte
	for got := 0; got < len(buf); {
		n, err := unix.Read(pp.fromChild, buf[got:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 {
			<-pp.waited
			return fmt.Errorf("process mode: the child exited before starting: %s", pp.childErr())
		}
		got += n
	}
	pp.child = thread{pid: cmd.Process.Pid, tid: int(binary.LittleEndian.Uint32(buf[:]))}
	if hot := math.Float64frombits(binary.LittleEndian.Uint64(buf[4:])); pp.size > 0 {
		pp.ws[1] = &workingSet{hotNs: hot}
	}
	pp.child.c0, pp.child.err = ReadCounters("/proc", pp.child.pid, pp.child.tid)
	return pp.child.err
}

func (pp *processPair) childErr() string {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := strings.TrimSpace(pp.stderr.String())
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		s = "no message"
	}
	return s
}

func (pp *processPair) ping() {
	var b [1]byte
	for !pp.p.stop.Load() {
		pp.ws[0].walk()
		if writeByte(pp.toChild, &b) != nil {
			return
		}
		if n, err := readByte(pp.fromChild, &b); n != 1 || err != nil {
			return
		}
		if n := pp.p.count.Add(1); n == pp.p.quota {
			return
		}
	}
}

// stopChild reads the child's final counters while it is still blocked in
// read, then closes its pipe so it exits, and reaps it.
func (pp *processPair) stopChild(*thread) {
	pp.mu.Lock()
	pp.readChildFinal()
	pp.mu.Unlock()
	unix.Close(pp.toChild)
	pp.toChild = -1
	select {
	case <-pp.waited:
	case <-time.After(time.Second):
		pp.force()
		<-pp.waited
	}
}

// wake needs nothing beyond the stop flag: the child answers within a
// round trip, and ping checks the flag after each.
func (pp *processPair) wake() { pp.p.stop.Store(true) }

// force kills a child that stopped answering (stopped by a signal, say);
// ping's read then sees end of file.
func (pp *processPair) force() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.cmd != nil && pp.cmd.Process != nil {
		select {
		case <-pp.waited:
		default:
			// A stopped child's counters are still there to read; once
			// killed they are gone.
			pp.readChildFinal()
			pp.cmd.Process.Kill()
		}
	}
}

// readChildFinal reads the child's final counters once, with mu held,
// before whichever of stopChild and force ends the child first.
func (pp *processPair) readChildFinal() {
	if pp.childFinal || pp.child.tid == 0 {
		return
	}
	pp.childFinal = true
	c1, err := ReadCounters("/proc", pp.child.pid, pp.child.tid)
	pp.child.c1 = c1
	if err != nil {
		pp.child.err = err
	}
	if pp.child.hw != nil && pp.child.hwErr == nil {
		pp.child.h1, pp.child.hwErr = pp.child.hw.read()
	}
}

func (pp *processPair) close() {
	pp.force()
	pp.mu.Lock()
	waited := pp.waited
	pp.mu.Unlock()
	if waited != nil {
		<-waited
	}
	for _, fd := range []*int{&pp.toChild, &pp.fromChild} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}
