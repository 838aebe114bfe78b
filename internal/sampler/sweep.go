package sampler

import (
	"fmt"
	"os"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The walk's passes look for processes it does not report (readUnwalked)
// in /proc, and listing /proc makes the kernel step over every thread's
// PID on the host to find the processes among them: 1-2 ms at 10,000
// threads and 9 at 100,000, in one pass out of every few, which made that
// pass two or three times a steady one. The sweep spreads the listing over
// the passes and steps over what the walk knows:
//
//   - /proc stays open, and a position in it is a PID plus a constant
//     (TGID_OFFSET in the kernel, learnt from the first, whole listing);
//   - a getdents64 whose buffer cannot hold one entry moves the position to
//     the first process at or past it and fails, so each probe (seek,
//     getdents64, seek back) names one process and steps over only the PIDs
//     between where it started and that process;
//   - a probe never starts inside a run of consecutive TIDs the walk
//     reported (a process and the threads it started together, usually): it
//     starts past the run, so the kernel does not visit those threads;
//   - a run that does not start with its process's PID (threads started
//     later, after other PIDs were taken) would have the kernel step over
//     it from the gap before it; when that gap is short beside the run,
//     each PID in it is asked instead (pidfd_open succeeds for a process
//     and fails for a thread or a free PID), and the probe starts past it;
//   - each pass makes a share of a sweep's probes, a sweep taking about
//     relistPasses passes, as the whole listing used to come every
//     relistPasses.
//
// A process the walk lacks holds a PID no walked thread holds, so skipping
// the runs misses none (a PID freed and reused since the walk is found by
// the next sweep, and a normal newcomer by the next walk anyway).

// tidRun is a run of consecutive TIDs the walk reported, first to last;
// led when the first is its process's own PID.
type tidRun struct {
	first, last int32
	led         bool
}

// sweepState is the sweep's memory between passes.
type sweepState struct {
	// fd is /proc, kept open; -1 until the first listing learnt offset.
	fd int
	// offset is the position of PID 0 in /proc (the kernel's TGID_OFFSET).
	offset int64
	// next is the PID the sweep goes on from.
	next int
	// runs are the walk's runs of consecutive TIDs, sorted, remade when
	// its threads change (resort).
	runs []tidRun
	// probes counts the probes made in the last pass, calls the system
	// calls they made, and spans holds where each began and the process
	// it found (first, last): what tests count instead of timing.
	probes, calls int
	spans         []tidRun
	// tiny is the buffer no entry fits in.
	tiny [8]byte
	// noPidfd is set when pidfd_open is not there (before Linux 5.3).
	noPidfd bool
}

// makeRuns sets the runs from the walk's threads in (PID, TID) order.
func (sw *sweepState) makeRuns(keys []uint64, sorted []int32) {
	sw.runs = sw.runs[:0]
	var pid uint64
	for _, k := range sorted {
		p, tid := keys[k]>>32, int32(uint32(keys[k]))
		if n := len(sw.runs); n > 0 && p == pid && sw.runs[n-1].last+1 == tid {
			sw.runs[n-1].last = tid
			continue
		}
		pid = p
		sw.runs = append(sw.runs, tidRun{tid, tid, uint64(tid) == p})
	}
	// An insertion sort, by hand: the runs come nearly in order (a
	// process's threads mostly follow its PID), and a generic sort's
	// copy for this type costs the binary some 7 KB.
	for i := 1; i < len(sw.runs); i++ {
		r, j := sw.runs[i], i
		for ; j > 0 && sw.runs[j-1].first > r.first; j-- {
			sw.runs[j] = sw.runs[j-1]
		}
		sw.runs[j] = r
	}
}

// after is the index of the first run that starts past pid.
func (sw *sweepState) after(pid int) int {
	lo, hi := 0, len(sw.runs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(sw.runs[m].first) <= pid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// past returns pid, or the first PID after the runs that hold it.
func (sw *sweepState) past(pid int) int {
	for {
		// runs[i-1] is the last run starting at or before pid.
		i := sw.after(pid)
		if i == 0 || int(sw.runs[i-1].last) < pid {
			return pid
		}
		pid = int(sw.runs[i-1].last) + 1
	}
}

// learnOffset finds the offset from the first whole listing's records:
// two numeric names in a row give it, the first's d_off being the second's
// position. It returns -1 when b has no such pair.
func learnOffset(b []byte) int64 {
	prevOff, prevNum := int64(-1), false
	for len(b) >= 19 {
		reclen := int(b[16]) | int(b[17])<<8
		if reclen < 19 || reclen > len(b) {
			return -1
		}
		v, ok := direntInt(b[19:reclen])
		if ok && prevNum {
			return prevOff - int64(v)
		}
		prevOff = int64(*(*uint64)(unsafe.Pointer(&b[8])))
		prevNum = ok
		b = b[reclen:]
	}
	return -1
}

// direntInt parses a record's NUL-terminated name as a PID.
func direntInt(name []byte) (int, bool) {
	v, ok := 0, false
	for _, c := range name {
		if c == 0 {
			break
		}
		if c < '0' || c > '9' || v > maxPID || (c == '0' && v == 0) {
			return 0, false
		}
		v, ok = v*10+int(c-'0'), true
	}
	return v, ok && v <= maxPID
}

// nextProcess is the first process in /proc at pid or past it; ok false at
// the end of /proc.
func (sw *sweepState) nextProcess(pid int) (next int, ok bool, err error) {
	pos := sw.offset + int64(pid)
	sw.calls += 3
	if _, _, e := unix.RawSyscall(unix.SYS_LSEEK, uintptr(sw.fd), uintptr(pos), unix.SEEK_SET); e != 0 {
		return 0, false, e
	}
	for {
		n, _, e := unix.RawSyscall(unix.SYS_GETDENTS64, uintptr(sw.fd), uintptr(unsafe.Pointer(&sw.tiny[0])), uintptr(len(sw.tiny)))
		if e == unix.EINTR {
			continue
		}
		if e == 0 && n == 0 {
			return 0, false, nil // past the last process
		}
		if e != unix.EINVAL {
			// An entry fit after all, or something else went wrong: the
			// whole listing serves from now on.
			if e == 0 {
				e = unix.EIO
			}
			return 0, false, e
		}
		break
	}
	at, _, e := unix.RawSyscall(unix.SYS_LSEEK, uintptr(sw.fd), 0, unix.SEEK_CUR)
	if e != 0 {
		return 0, false, e
	}
	next = int(int64(at) - sw.offset)
	if next < pid || next > maxPID {
		return 0, false, unix.EIO
	}
	return next, true, nil
}

// sweep makes this pass's probes and appends to pids, kept sorted, the
// processes found that walked, sorted, lacks. A probe that fails closes
// the sweep: the whole listing serves from then on.
func (sw *sweepState) sweep(pids, walked []int, budget int) []int {
	sw.probes, sw.calls, sw.spans = 0, 0, sw.spans[:0]
	for range budget {
		pid := sw.past(max(sw.next, 1))
		sw.probes++
		if r, ok := sw.headless(pid); ok {
			asked := true
			for p := pid; asked && p < int(r.first); p++ {
				var is bool
				if is, asked = sw.isProcess(p); is {
					pids = unwalked(pids, walked, p)
				}
			}
			if asked {
				sw.spans = append(sw.spans, tidRun{first: int32(pid), last: int32(pid)})
				sw.next = int(r.last) + 1
				continue
			}
		}
		next, ok, err := sw.nextProcess(pid)
		if err != nil {
			sw.close()
			return pids
		}
		if !ok {
			sw.spans = append(sw.spans, tidRun{first: int32(pid), last: maxPID})
			sw.next = 1 // the sweep is done; the next starts over
			return pids
		}
		sw.spans = append(sw.spans, tidRun{first: int32(pid), last: int32(next)})
		sw.next = next + 1
		pids = unwalked(pids, walked, next)
	}
	return pids
}

// unwalked adds process p to pids, sorted, unless walked holds it.
func unwalked(pids, walked []int, p int) []int {
	if _, in := slices.BinarySearch(walked, p); in {
		return pids
	}
	if i, in := slices.BinarySearch(pids, p); !in {
		pids = append(pids, 0)
		copy(pids[i+1:], pids[i:])
		pids[i] = p
	}
	return pids
}

// headless returns the run after pid (which no run holds) when it does
// not start with its process's PID and the gap before it is short beside
// it: asking each PID in the gap costs a system call or two, stepping
// over a thread in the kernel some 30 ns.
func (sw *sweepState) headless(pid int) (tidRun, bool) {
	if sw.noPidfd {
		return tidRun{}, false
	}
	i := sw.after(pid)
	if i == len(sw.runs) || sw.runs[i].led {
		return tidRun{}, false
	}
	r := sw.runs[i]
	return r, int(r.first)-pid <= max(16, int(r.last-r.first+1)/32)
}

// isProcess asks whether pid is a process (a thread group's leader):
// pidfd_open refuses a thread's TID and a free PID. asked is false when
// the kernel has no pidfd_open.
func (sw *sweepState) isProcess(pid int) (is, asked bool) {
	sw.calls++
	fd, _, e := unix.RawSyscall(unix.SYS_PIDFD_OPEN, uintptr(pid), 0, 0)
	switch e {
	case 0:
		sw.calls++
		closeFD(int(fd))
		return true, true
	case unix.ESRCH, unix.EINVAL:
		return false, true
	default:
		sw.noPidfd = true
		return false, false
	}
}

// budget is how many probes a pass makes: a probe finds one process, so
// a share of the processes, for a sweep of about relistPasses passes.
func (sw *sweepState) budget(processes int) int {
	return processes/relistPasses + 2
}

func (sw *sweepState) close() {
	if sw.fd >= 0 {
		closeFD(sw.fd)
		sw.fd = -1
	}
}

// listForSweep lists /proc whole into s.pids, as listProcesses does, and
// keeps it open for the sweeps (open).
func (s *Sampler) listForSweep() (err error) {
	if s.pids, err = s.it.sw.open(s.rootFD, s.dirBuf, s.pids[:0]); err != nil {
		return fmt.Errorf("listing %s: %w", s.fs.Root(), err)
	}
	return nil
}

// open lists the procfs at rootFD whole into pids, sorted, and keeps it
// open for the sweeps when the listing told the offset and a probe for
// this very process finds it.
func (sw *sweepState) open(rootFD int, buf []byte, pids []int) ([]int, error) {
	fd, err := openDir(rootFD, dotPath)
	if err != nil {
		return pids, err
	}
	off := int64(-1)
	for {
		n, err := getdents(fd, buf)
		if err != nil {
			closeFD(fd)
			return pids, err
		}
		if n <= 0 {
			break
		}
		pids = appendDirentInts(buf[:n], pids)
		if off < 0 {
			off = learnOffset(buf[:n])
		}
	}
	if !slices.IsSorted(pids) {
		slices.Sort(pids)
	}
	if off < 0 {
		closeFD(fd)
		return pids, nil
	}
	sw.fd, sw.offset, sw.next = fd, off, 1
	self := os.Getpid()
	if p, ok, err := sw.nextProcess(self); err != nil || !ok || p != self {
		sw.close() // positions are not what the sweep takes them for
	}
	return pids, nil
}
