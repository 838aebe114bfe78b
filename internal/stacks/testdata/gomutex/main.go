// Command gomutex is a Go program whose goroutines contend for sync.Mutexes
// in two known functions, main.(*ledger).transfer and main.(*ledger).audit,
// counting how often each Lock had to wait: the tests compare ctxtop's
// stacks with these counts.
//
// With -lock each worker goroutine is locked to its own OS thread, named
// "worker" (so a monitor can tell the workers' threads from the runtime's),
// and GOMAXPROCS is the number of workers, so a wait for a mutex parks the
// goroutine and blocks its thread in the kernel (a futex in the runtime's
// scheduler), not only a goroutine. transfer is called three times for
// each audit.
//
// Every 100 ms it prints "transfer=T audit=A": the Locks that found the
// mutex held (TryLock failed) and waited, by function.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

type ledger struct {
	// mu guards balance for transfer, auditMu the audit's snapshot: a
	// waiter for one is woken by an Unlock in the same function.
	mu, auditMu sync.Mutex
	balance     int64
	hold        time.Duration
}

var transferWaits, auditWaits atomic.Int64

// spin keeps the mutex held for d without leaving the CPU.
func spin(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
	}
}

//go:noinline
func (l *ledger) transfer(amount int64) {
	if !l.mu.TryLock() {
		transferWaits.Add(1)
		l.mu.Lock()
	}
	l.balance += amount
	spin(l.hold)
	l.mu.Unlock()
}

//go:noinline
func (l *ledger) audit() int64 {
	if !l.auditMu.TryLock() {
		auditWaits.Add(1)
		l.auditMu.Lock()
	}
	b := l.balance
	spin(l.hold)
	l.auditMu.Unlock()
	return b
}

// nameThread names the calling OS thread (its comm), as prctl(2)
// PR_SET_NAME does; the goroutine must be locked to it.
func nameThread(name string) {
	b := append([]byte(name), 0)
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0)
}

func main() {
	workers := flag.Int("workers", 4, "goroutines, each on its own OS thread")
	hold := flag.Duration("hold", 200*time.Microsecond, "how long each call holds the mutex")
	pause := flag.Duration("pause", 200*time.Microsecond, "how long a worker sleeps between calls")
	lock := flag.Bool("lock", false, "lock each worker goroutine to its OS thread")
	flag.Parse()
	// The main goroutine keeps the main thread, whose name is the
	// process's: no worker renames it.
	runtime.LockOSThread()
	runtime.GOMAXPROCS(*workers)
	l := &ledger{hold: *hold}
	for w := range *workers {
		go func() {
			if *lock {
				runtime.LockOSThread()
				nameThread("worker")
			}
			for i := w; ; i++ {
				if i%4 == 3 {
					l.audit()
				} else {
					l.transfer(1)
				}
				time.Sleep(*pause)
			}
		}()
	}
	for range time.Tick(100 * time.Millisecond) {
		fmt.Fprintf(os.Stdout, "transfer=%d audit=%d\n", transferWaits.Load(), auditWaits.Load())
	}
}
