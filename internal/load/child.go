package load

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"golang.org/x/sys/unix"
)

// RunChild is the child side of process mode, run by the hidden
// subcommand: it answers every byte on fd 3 with a byte on fd 4 until the
// parent closes its end. cpu < 0 leaves it unpinned.
func RunChild(cpu int) error {
	runtime.LockOSThread()
	// The pong thread blocks in raw read(2), holding its P, which is what
	// makes this side as cheap as perf's (14 vs 24 µs per round trip on
	// one CPU, measured). A stop-the-world could then wait for it while
	// the parent waits for us, so the collector is off, periodic forced
	// collections included; this process allocates nothing after startup.
	debug.SetGCPercent(-1)
	// Ctrl-C reaches the whole foreground process group; the parent stops
	// the run and then closes the pipe, and it must still be able to read
	// this process's counters when it does.
	signal.Ignore(os.Interrupt)
	name := threadName("pong", ModeProcess)
	if err := setThreadName(name); err != nil {
		return err
	}
	if cpu >= 0 {
		if err := pinSelf(cpu); err != nil {
			return err
		}
	}
	var tid [4]byte
	binary.LittleEndian.PutUint32(tid[:], uint32(gettid()))
	if _, err := unix.Write(childWriteFD, tid[:]); err != nil {
		return fmt.Errorf("writing to the parent: %w", err)
	}
	var b [1]byte
	for {
		n, err := readByte(syscall.RawSyscall, childReadFD, &b)
		if n != 1 || err != nil {
			return nil // the parent closed the pipe, or is gone
		}
		if writeByte(syscall.RawSyscall, childWriteFD, &b) != nil {
			return nil
		}
	}
}
