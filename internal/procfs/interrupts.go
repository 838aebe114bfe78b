package procfs

// Interrupts is what ctxtop takes from /proc/interrupts: one header line of
// CPU columns (online CPUs only), then a row per interrupt source:
//
//	           CPU0       CPU1
//	 24:          1          0  IO-APIC   5-edge      ACPI:Ged
//	RES:       6739       6350   Rescheduling interrupts
//	ERR:          0
//
// RES counts rescheduling IPIs: one CPU asking another to run its scheduler,
// typically because it woke a task that should run over there. CAL counts
// function-call IPIs, which since Linux 5.8 also carry a wake-up to a CPU
// that shares no cache with the waker (queued on its wake list); other
// architectures may have no such row. ERR and MIS
// carry one system-wide value and are left out of the per-CPU sums.
type Interrupts struct {
	CPUs          int
	ReschedIPIs   uint64
	ReschedPerCPU []uint64
	// CallIPIs sums the CAL row; 0 when there is none.
	CallIPIs uint64
	// PerCPU sums every per-CPU row for each CPU column.
	PerCPU []uint64
}

// Interrupts reads <root>/interrupts.
func (fs FS) Interrupts() (Interrupts, error) {
	p := fs.Path("interrupts")
	b, err := ReadFile(p, LimitInterrupts)
	if err != nil {
		return Interrupts{}, err
	}
	var in Interrupts
	err = ParseInterrupts(b, p, &in)
	return in, err
}

// ParseInterrupts parses the contents of /proc/interrupts into dst, reusing
// its slices so a poller allocates nothing per tick.
func ParseInterrupts(b []byte, path string, dst *Interrupts) error {
	header, i := nextLine(b, 0)
	cpus := 0
	for j := 0; ; {
		var f []byte
		f, j = nextField(header, j)
		if len(f) == 0 {
			break
		}
		if !hasPrefix(f, "CPU") {
			return parseErr(path, "header")
		}
		cpus++
	}
	if cpus == 0 {
		return parseErr(path, "header")
	}
	dst.CPUs = cpus
	dst.ReschedIPIs, dst.CallIPIs = 0, 0
	dst.ReschedPerCPU = resize(dst.ReschedPerCPU, cpus)
	dst.PerCPU = resize(dst.PerCPU, cpus)
	for i < len(b) {
		var line []byte
		line, i = nextLine(b, i)
		label, j := nextField(line, 0)
		if len(label) == 0 {
			continue
		}
		if label[len(label)-1] != ':' {
			return parseErr(path, string(label))
		}
		isRes, isCal := string(label) == "RES:", string(label) == "CAL:"
		// A row is per-CPU only if it has a number for every column.
		k, start := 0, j
		for ; k < cpus; k++ {
			var f []byte
			f, j = nextField(line, j)
			if _, ok := parseUint(f); !ok {
				break
			}
		}
		if k < cpus {
			if isRes {
				return parseErr(path, "RES")
			}
			continue
		}
		j = start
		for c := 0; c < cpus; c++ {
			var f []byte
			f, j = nextField(line, j)
			v, _ := parseUint(f)
			dst.PerCPU[c] += v
			switch {
			case isRes:
				dst.ReschedPerCPU[c] = v
				dst.ReschedIPIs += v
			case isCal:
				dst.CallIPIs += v
			}
		}
	}
	return nil
}

func resize(s []uint64, n int) []uint64 {
	if cap(s) < n {
		return make([]uint64, n)
	}
	s = s[:n]
	clear(s)
	return s
}
