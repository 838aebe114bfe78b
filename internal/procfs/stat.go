package procfs

// Stat holds the system-wide lines of /proc/stat that ctxtop uses.
//
//	ctxt N            context switches on all CPUs since boot (vmstat "cs")
//	intr N ...        first field: all interrupts serviced since boot (vmstat "in")
//	procs_running N   tasks runnable right now
//	procs_blocked N   tasks in uninterruptible sleep (usually I/O)
//	cpuN ...          one line per online CPU
type Stat struct {
	ContextSwitches uint64
	Interrupts      uint64
	ProcsRunning    uint64
	ProcsBlocked    uint64
	// CPUs counts the per-CPU "cpuN" lines: the online CPUs.
	CPUs int
}

// Stat reads <root>/stat.
func (fs FS) Stat() (Stat, error) {
	p := fs.Path("stat")
	b, err := ReadFile(p, LimitStat)
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(b, p)
}

// ParseStat parses the contents of /proc/stat; path is only used in errors.
// ctxt is required; the other lines are optional so old or trimmed kernels work.
func ParseStat(b []byte, path string) (Stat, error) {
	var s Stat
	haveCtxt := false
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		name, j := nextField(line, 0)
		if len(name) > 3 && hasPrefix(name, "cpu") && name[3] >= '0' && name[3] <= '9' {
			s.CPUs++
			continue
		}
		var dst *uint64
		switch string(name) {
		case "ctxt":
			dst, haveCtxt = &s.ContextSwitches, true
		case "intr":
			dst = &s.Interrupts
		case "procs_running":
			dst = &s.ProcsRunning
		case "procs_blocked":
			dst = &s.ProcsBlocked
		default:
			continue
		}
		f, _ := nextField(line, j)
		v, ok := parseUint(f)
		if !ok {
			return Stat{}, parseErr(path, string(name))
		}
		*dst = v
	}
	if !haveCtxt {
		return Stat{}, parseErr(path, "ctxt")
	}
	return s, nil
}
