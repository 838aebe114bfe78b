package load

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// perfCounter is one perf_event_open counter on one thread, counting from
// when it is opened until it is closed.
type perfCounter struct{ fd int }

// openPerfCounter counts event (typ, config) on thread tid (0: the calling
// thread), on whatever CPU it runs. Kernel time is counted when the system
// allows it, since a switch is mostly kernel work; userOnly reports that
// perf_event_paranoid allowed user space only.
func openPerfCounter(tid int, typ uint32, config uint64) (c perfCounter, userOnly bool, err error) {
	attr := unix.PerfEventAttr{
		Type:        typ,
		Config:      config,
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
		Bits:        unix.PerfBitExcludeHv,
	}
	fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		attr.Bits |= unix.PerfBitExcludeKernel
		fd, err = unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		userOnly = true
	}
	if err != nil {
		return perfCounter{fd: -1}, false, err
	}
	return perfCounter{fd: fd}, userOnly, nil
}

// read is the count so far, scaled up if the PMU was shared (multiplexed)
// for part of the time.
func (c perfCounter) read() (uint64, error) {
	var b [24]byte
	n, err := unix.Read(c.fd, b[:])
	if err != nil {
		return 0, err
	}
	if n != len(b) {
		return 0, fmt.Errorf("perf counter: short read of %d bytes", n)
	}
	v := binary.NativeEndian.Uint64(b[0:])
	enabled := binary.NativeEndian.Uint64(b[8:])
	running := binary.NativeEndian.Uint64(b[16:])
	if running > 0 && running < enabled {
		v = uint64(float64(v) * float64(enabled) / float64(running))
	}
	return v, nil
}

func (c perfCounter) close() {
	if c.fd >= 0 {
		unix.Close(c.fd)
	}
}

// The hardware events reported per round trip, in HWCounts' order.
var hwEvents = [3]uint64{unix.PERF_COUNT_HW_INSTRUCTIONS, unix.PERF_COUNT_HW_CPU_CYCLES, unix.PERF_COUNT_HW_CACHE_MISSES}

// hwSet is the hardware counters of one thread.
type hwSet struct {
	c        [3]perfCounter
	userOnly bool
}

// openHW opens every hardware event on tid; the error says why the PMU is
// not usable, in words for the summary's note.
func openHW(tid int) (*hwSet, error) {
	h := &hwSet{}
	for i, ev := range hwEvents {
		c, userOnly, err := openPerfCounter(tid, unix.PERF_TYPE_HARDWARE, ev)
		if err != nil {
			h.close()
			return nil, hwReason(err)
		}
		h.c[i], h.userOnly = c, h.userOnly || userOnly
	}
	return h, nil
}

func (h *hwSet) read() ([3]uint64, error) {
	var v [3]uint64
	for i, c := range h.c {
		n, err := c.read()
		if err != nil {
			return v, err
		}
		v[i] = n
	}
	return v, nil
}

func (h *hwSet) close() {
	for _, c := range h.c {
		if c.fd > 0 {
			c.close()
		}
	}
}

// hwReason turns perf_event_open's errno into the reason users need.
func hwReason(err error) error {
	switch {
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		return fmt.Errorf("no hardware performance counters here (perf_event_open: %v; many VMs expose no PMU)", err)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("perf_event_open not permitted (%v): lower /proc/sys/kernel/perf_event_paranoid or run as root", err)
	case errors.Is(err, unix.ENOSYS):
		return errors.New("this kernel has no perf_event_open")
	}
	return fmt.Errorf("perf_event_open: %w", err)
}

// HWCounts are hardware counter totals over the workload's threads, and
// per round trip (per work item in pool mode, per wake-up in poll mode).
type HWCounts struct {
	Instructions             uint64  `json:"instructions"`
	Cycles                   uint64  `json:"cycles"`
	CacheMisses              uint64  `json:"cache_misses"`
	InstructionsPerRoundTrip float64 `json:"instructions_per_round_trip"`
	CyclesPerRoundTrip       float64 `json:"cycles_per_round_trip"`
	CacheMissesPerRoundTrip  float64 `json:"cache_misses_per_round_trip"`
	// UserOnly: the kernel allowed counting user space only, which leaves
	// out the switch itself.
	UserOnly bool `json:"user_only"`
}
