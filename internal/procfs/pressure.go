package procfs

// PressureSome is the "some" line of /proc/pressure/cpu (pressure stall
// information, Linux 4.20+):
//
//	some avg10=0.31 avg60=2.20 avg300=0.96 total=19669245
type PressureSome struct {
	// Avg10 is the share of the last 10 s in which some runnable task
	// waited for a CPU, in percent.
	Avg10 float64
	// Total is the time some task waited, in microseconds since boot: a
	// counter, unlike the averages. HasTotal is false if the field is absent.
	Total    uint64
	HasTotal bool
}

// ParsePressureCPUSome returns the "some" line of /proc/pressure/cpu: avg10
// (required) and total= (optional).
func ParsePressureCPUSome(b []byte, path string) (PressureSome, error) {
	for i := 0; i < len(b); {
		var line []byte
		line, i = nextLine(b, i)
		kind, j := nextField(line, 0)
		if string(kind) != "some" {
			continue
		}
		f, j := nextField(line, j)
		if !hasPrefix(f, "avg10=") {
			return PressureSome{}, parseErr(path, "some avg10")
		}
		v, ok := parseFixed(f[len("avg10="):])
		if !ok {
			return PressureSome{}, parseErr(path, "some avg10")
		}
		s := PressureSome{Avg10: v}
		for j < len(line) {
			f, j = nextField(line, j)
			if len(f) == 0 {
				break
			}
			if hasPrefix(f, "total=") {
				if s.Total, s.HasTotal = parseUint(f[len("total="):]); !s.HasTotal {
					return PressureSome{}, parseErr(path, "some total")
				}
			}
		}
		return s, nil
	}
	return PressureSome{}, parseErr(path, "some")
}
