package load

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/selfprio"
)

// ChildMain runs one of the hidden roles this binary is re-executed in;
// args are what follows ChildCommand:
//
//	--runner                         the workload process (runner.go)
//	--cpu N [--working-set BYTES]    process mode's partner (pong)
func ChildMain(args []string) error {
	// Back to the priority the monitor was started with, not the one it
	// raised itself to.
	selfprio.Restore()
	if len(args) == 1 && args[0] == "--runner" {
		return runRunner()
	}
	cpu, ws := -1, int64(0)
	for i := 0; i+1 < len(args); i += 2 {
		n, err := strconv.ParseInt(args[i+1], 10, 64)
		if err != nil {
			return fmt.Errorf("%s: bad value %q", args[i], args[i+1])
		}
		switch args[i] {
		case "--cpu":
			cpu = int(n)
		case "--working-set":
			ws = n
		default:
			return fmt.Errorf("unknown flag %s", args[i])
		}
	}
	if len(args)%2 != 0 {
		return errors.New("usage: " + ChildCommand + " --runner | --cpu N [--working-set BYTES]")
	}
	return RunChild(cpu, ws)
}

// RunAsChildIfAsked serves a test binary re-executed as a workload
// process, and exits; otherwise it returns at once. A TestMain of any
// package whose tests start loads calls it first.
func RunAsChildIfAsked() {
	if len(os.Args) < 2 || os.Args[1] != ChildCommand {
		return
	}
	if err := ChildMain(os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// RunChild is the child side of process mode: it answers every byte on
// fd 3 with a byte on fd 4 until the parent closes its end, walking its
// working set of ws bytes before each answer. cpu < 0 leaves it unpinned.
func RunChild(cpu int, ws int64) error {
	runtime.LockOSThread()
	// The pong thread blocks in raw read(2), holding its P, which is what
	// makes this side as cheap as perf's (14 vs 24 µs per round trip on
	// one CPU, measured). A stop-the-world could then wait for it while
	// the parent waits for us, so the collector is off, periodic forced
	// collections included; this process allocates nothing after startup.
	debug.SetGCPercent(-1)
	// Ctrl-C, a hang-up and a SIGTERM to the group (timeout, a service
	// manager) reach the whole process group; the parent stops the run and
	// then closes the pipe, and it must still be able to read this
	// process's counters when it does.
	signal.Ignore(os.Interrupt, syscall.SIGHUP, syscall.SIGTERM)
	name := threadName("pong", ModeProcess)
	if err := setThreadName(name); err != nil {
		return err
	}
	if cpu >= 0 {
		if err := pinSelf(cpu); err != nil {
			return err
		}
	}
	if ws < 0 || ws > MaxWorkingSet {
		return fmt.Errorf("working set %d out of range", ws)
	}
	w := newWorkingSet(ws)
	var hello [12]byte
	binary.LittleEndian.PutUint32(hello[:], uint32(gettid()))
	if w != nil {
		binary.LittleEndian.PutUint64(hello[4:], math.Float64bits(w.hotNs))
	}
	if _, err := unix.Write(childWriteFD, hello[:]); err != nil {
		return fmt.Errorf("writing to the parent: %w", err)
	}
	var b [1]byte
	for {
		n, err := readByte(childReadFD, &b)
		if n != 1 || err != nil {
			return nil // the parent closed the pipe, or is gone
		}
		w.walk()
		if writeByte(childWriteFD, &b) != nil {
			return nil
		}
	}
}
