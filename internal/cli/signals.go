package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// stuckGrace is how long batch mode waits at least, after a signal, for
// the pass in progress to finish before it gives up on it.
const stuckGrace = 500 * time.Millisecond

// passTimes keeps the longest pass seen, so that a pass merely slow (a
// host of 20,000 tasks beside CPU hogs takes over a second) is told from
// one stuck: the grace after a signal is at least twice the longest.
type passTimes struct{ longest atomic.Int64 }

// time runs one pass and notes how long it took.
func (p *passTimes) time(pass func() error) error {
	start := time.Now()
	err := pass()
	if d := int64(time.Since(start)); d > p.longest.Load() {
		p.longest.Store(d)
	}
	return err
}

// grace is how long to wait for a pass in progress after a signal.
func (p *passTimes) grace() time.Duration {
	return max(stuckGrace, 2*time.Duration(p.longest.Load()))
}

// stopOnSignal returns a context cancelled by SIGINT, SIGTERM or SIGHUP.
// Normally the report loop sees it and returns at once. When it cannot (a
// read stuck in the kernel on a hung FUSE or NFS mount under --proc, or a
// stdout nobody drains), the watcher gives up after grace: it prints one
// line and exits 128+signal, the status a shell reports for a process the
// signal killed. The caller must call the returned func when it returns.
//
// The watcher is one goroutine blocked on channels: it costs no wake-ups
// while the monitor idles.
func stopOnSignal(parent context.Context, grace func() time.Duration) (context.Context, func()) {
	// The sampler reads with raw syscalls, which keep their P while they
	// wait: with a single P the watcher could never run.
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
	ctx, cancel := context.WithCancel(parent)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	finished := make(chan struct{})
	go func() {
		select {
		case sig := <-sigc:
			cancel()
			t := time.NewTimer(grace())
			select {
			case <-finished:
				t.Stop()
			case <-t.C:
				n := int(sig.(syscall.Signal))
				fmt.Fprintf(os.Stderr, "ctxtop: %s: a read under --proc or a write to stdout is stuck; exiting\n", unix.SignalName(syscall.Signal(n)))
				os.Exit(128 + n)
			}
		case <-finished:
		}
	}()
	return ctx, func() {
		signal.Stop(sigc)
		close(finished)
		cancel()
	}
}
