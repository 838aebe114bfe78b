package taskiter

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The record layout of bpf/taskiter.bpf.c (struct rec), little-endian as
// the object is bpfel. Offsets are the C struct's.
const (
	recMaskOff = 96 // comm ends here; mask words follow

	// changedWord is the size of an entry of the changed list (u64).
	changedWord = 8

	// MaxMaskWords is how many 64-bit words of a thread's affinity the
	// program copies at most (MAX_MASK_WORDS): 1024 CPUs. A machine with
	// more possible CPUs uses /proc.
	MaxMaskWords = 16

	// maxID bounds thread and process IDs: PID_MAX_LIMIT on 64-bit Linux.
	maxID = 4 << 20

	pfWQWorker = 0x00000020
	pfKthread  = 0x00200000
)

// recordSize is the length of a record whose mask has maskWords words.
func recordSize(maskWords int) int { return recMaskOff + 8*maskWords }

// ErrRecord means a record is not what the program writes: out of range.
// It is never trusted further.
var ErrRecord = errors.New("bad task iterator record")

// Record is one thread as the program saw it. Comm and Mask point into the
// shared array and are valid until the next pass.
type Record struct {
	TID, PID int
	// StartNs is the task's start_boottime (ns since boot); StartTicks
	// converts it to /proc's unit.
	StartNs uint64
	// VoluntarySwitches and InvoluntarySwitches are nvcsw and nivcsw,
	// status's voluntary_ctxt_switches and nonvoluntary_ctxt_switches.
	VoluntarySwitches, InvoluntarySwitches uint64
	// RunNs, WaitNs and Timeslices are schedstat's three fields.
	RunNs, WaitNs, Timeslices uint64
	// Migrations is se.nr_migrations, /proc/PID/task/TID/sched's count of
	// moves to another CPU.
	Migrations uint64
	// CPU is task_cpu(), stat's field 39.
	CPU int
	// State and ExitState are the raw __state and exit_state; StateLetter
	// turns them into status's letter.
	State, ExitState uint32
	// Kernel marks a kernel thread, Workqueue a workqueue worker, whose
	// /proc name adds what it works on to Comm.
	Kernel, Workqueue bool
	// Comm is the kernel's task name, up to its NUL; Mask is cpus_mask as
	// little-endian 64-bit words.
	Comm, Mask []byte
}

// decode reads the record b, recordSize(maskWords) bytes, into r.
func decode(b []byte, maskWords int, r *Record) error {
	if len(b) != recordSize(maskWords) {
		return fmt.Errorf("%w: %d bytes, a record is %d", ErrRecord, len(b), recordSize(maskWords))
	}
	le := binary.LittleEndian
	tid, tgid := le.Uint32(b), le.Uint32(b[4:])
	if tid == 0 || tid >= maxID || tgid == 0 || tgid >= maxID {
		return fmt.Errorf("%w: thread %d of process %d", ErrRecord, tid, tgid)
	}
	cpu := le.Uint32(b[56:])
	if cpu >= 1<<16 {
		return fmt.Errorf("%w: thread %d on CPU %d", ErrRecord, tid, cpu)
	}
	flags := le.Uint32(b[68:])
	comm := b[80:recMaskOff]
	for i, c := range comm {
		if c == 0 {
			comm = comm[:i]
			break
		}
	}
	*r = Record{
		TID: int(tid), PID: int(tgid),
		StartNs:             le.Uint64(b[8:]),
		VoluntarySwitches:   le.Uint64(b[16:]),
		InvoluntarySwitches: le.Uint64(b[24:]),
		RunNs:               le.Uint64(b[32:]),
		WaitNs:              le.Uint64(b[40:]),
		Timeslices:          le.Uint64(b[48:]),
		CPU:                 int(cpu),
		State:               le.Uint32(b[60:]),
		ExitState:           le.Uint32(b[64:]),
		Migrations:          le.Uint64(b[72:]),
		Kernel:              flags&pfKthread != 0,
		Workqueue:           flags&pfWQWorker != 0,
		Comm:                comm,
		Mask:                b[recMaskOff:],
	}
	return nil
}

// StateLetter is the one-letter state /proc shows for a task whose
// __state and exit_state are state and exit (fs/proc/array.c,
// task_state_index in include/linux/sched.h).
func StateLetter(state, exit uint32) byte {
	const (
		taskReport       = 0x7f   // the states /proc reports, EXIT_* included
		taskUninterrupt  = 0x2    // TASK_UNINTERRUPTIBLE
		taskIdle         = 0x402  // TASK_UNINTERRUPTIBLE | TASK_NOLOAD
		taskReportIdle   = 0x80   // TASK_REPORT + 1
		taskRTLockWait   = 0x1000 // TASK_RTLOCK_WAIT
		taskFrozen       = 0x8000 // TASK_FROZEN (6.1+)
		taskStateLetters = "RSDTtXZPI"
	)
	s := (state | exit) & taskReport
	if state&taskIdle == taskIdle {
		s = taskReportIdle
	}
	if state&(taskRTLockWait|taskFrozen) != 0 {
		s = taskUninterrupt
	}
	i := 0
	for s != 0 {
		i++
		s >>= 1
	}
	return taskStateLetters[i]
}

// AppendCPUList appends mask, ncpu bits of little-endian 64-bit words, as
// /proc's Cpus_allowed_list prints it ("0-3,8"); bits from ncpu on are not
// CPUs of this machine and are ignored.
func AppendCPUList(dst, mask []byte, ncpu int) []byte {
	bit := func(i int) bool { return i/8 < len(mask) && mask[i/8]&(1<<(i%8)) != 0 }
	first := true
	for i := 0; i < ncpu; i++ {
		if !bit(i) {
			continue
		}
		j := i
		for j+1 < ncpu && bit(j+1) {
			j++
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendUint(dst, i)
		if j > i {
			dst = append(dst, '-')
			dst = appendUint(dst, j)
		}
		i = j
	}
	return dst
}

func appendUint(b []byte, v int) []byte {
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}
