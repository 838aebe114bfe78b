package procfs

import (
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// UserHZ is the unit of /proc's clock ticks (sysconf(_SC_CLK_TCK)): 100 on
// every architecture Go builds for on Linux.
const UserHZ = 100

// Started returns when process pid (under the procfs root proc) started,
// on today's wall clock, to the tick: its stat's starttime (ticks after
// boot) set against CLOCK_BOOTTIME now. It serves to tell a file the
// process wrote from one an earlier holder of its PID left (Predates). A
// wall clock stepped forward between the write and now makes a file look
// older than it is, never newer.
func Started(proc string, pid int) (time.Time, error) {
	p := filepath.Join(proc, strconv.Itoa(pid), "stat")
	b, err := ReadFile(p, LimitLine)
	if err != nil {
		return time.Time{}, err
	}
	st, err := ParseTaskStat(b, p)
	if err != nil {
		return time.Time{}, err
	}
	var boot unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot); err != nil {
		return time.Time{}, err
	}
	now := time.Now()
	age := time.Duration(boot.Nano()) - time.Duration(st.StartTime)*(time.Second/UserHZ)
	return now.Add(-age), nil
}

// Predates reports whether a file last modified at mtime was written before
// a process that started at started (Started) by more than two ticks, the
// start's resolution and its rounding: an earlier holder of the PID's.
func Predates(mtime, started time.Time) bool {
	return mtime.Before(started.Add(-2 * time.Second / UserHZ))
}
