package sampler

import (
	"fmt"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// The system-wide files stay open for the sampler's life and are re-read
// with pread each pass. Only stat is required.
const (
	sysStat = iota
	sysInterrupts
	sysLoadAvg
	sysPressure
	sysFiles
)

var sysNames = [sysFiles]string{"stat", "interrupts", "loadavg", "pressure/cpu"}

// openSystem opens the system-wide files; a missing optional one (older
// kernels, containers) is left at -1.
func (s *Sampler) openSystem() error {
	for i, name := range sysNames {
		fd, err := openFile(s.rootFD, cstr(nil, name))
		if err != nil {
			if i == sysStat {
				return &procfs.RootError{Root: s.fs.Root(), Problem: "not a procfs (no usable stat file: " + err.Error() + ")"}
			}
			continue
		}
		s.sysFD[i] = fd
	}
	return nil
}

func (s *Sampler) closeSystem() {
	for i, fd := range s.sysFD {
		if fd >= 0 {
			closeFD(fd)
			s.sysFD[i] = -1
		}
	}
}

// readSystem fills sys from the system-wide files. A stat that cannot be
// read or parsed mid-run is not the end of the run, in any mode: its
// counters are left zero and sys.Unread says why, so the pass goes on with
// the threads and the reports say which intervals have no host-wide rates.
// The optional files leave their fields zero.
func (s *Sampler) readSystem(sys *model.SystemCounters) {
	sys.Unread = ""
	n, err := readAll(s.sysFD[sysStat], &s.buf, procfs.LimitStat)
	var st procfs.Stat
	if err == nil {
		st, err = procfs.ParseStat(s.buf[:n], "stat")
	} else {
		err = fmt.Errorf("reading %s: %w", s.fs.Path("stat"), err)
	}
	if err != nil {
		sys.Unread = sanitize.Name(err.Error())
	}
	sys.ContextSwitches, sys.Interrupts = st.ContextSwitches, st.Interrupts
	sys.ProcsRunning, sys.ProcsBlocked = st.ProcsRunning, st.ProcsBlocked
	sys.CPUs = st.CPUs

	sys.ReschedIPIs = 0
	sys.ReschedPerCPU, sys.InterruptsPerCPU = sys.ReschedPerCPU[:0], sys.InterruptsPerCPU[:0]
	if fd := s.sysFD[sysInterrupts]; fd >= 0 {
		if n, err = readAll(fd, &s.buf, procfs.LimitInterrupts); err == nil {
			err = procfs.ParseInterrupts(s.buf[:n], "interrupts", &s.intr)
		} else if err == procfs.ErrTooLarge {
			// Not a kernel's file: stop copying 32 MiB every pass.
			closeFD(fd)
			s.sysFD[sysInterrupts] = -1
		}
		if err == nil {
			sys.CPUs = s.intr.CPUs
			sys.ReschedIPIs = s.intr.ReschedIPIs
			sys.ReschedPerCPU = append(sys.ReschedPerCPU, s.intr.ReschedPerCPU...)
			sys.InterruptsPerCPU = append(sys.InterruptsPerCPU, s.intr.PerCPU...)
		}
	}
	sys.LoadAvg = [3]float64{}
	s.tasksMade = false
	if fd := s.sysFD[sysLoadAvg]; fd >= 0 {
		if n, err = readAll(fd, &s.buf, procfs.LimitLine); err == nil {
			sys.LoadAvg, _ = procfs.ParseLoadAvg(s.buf[:n], "loadavg")
			if s.lastPID, err = procfs.ParseLoadAvgLastPID(s.buf[:n], "loadavg"); err == nil {
				s.tasksMade = true
			}
		}
	}
	sys.HasPSI, sys.PSICPUSomeAvg10 = false, 0
	sys.HasPSITotal, sys.PSICPUSomeTotalUs = false, 0
	if fd := s.sysFD[sysPressure]; fd >= 0 {
		if n, err = readAll(fd, &s.buf, procfs.LimitLine); err == nil {
			if v, err := procfs.ParsePressureCPUSome(s.buf[:n], "pressure/cpu"); err == nil {
				sys.HasPSI, sys.PSICPUSomeAvg10 = true, v.Avg10
				sys.HasPSITotal, sys.PSICPUSomeTotalUs = v.HasTotal, v.Total
			}
		}
	}
}
