package procfs

// LoadAvg reads <root>/loadavg: "0.00 0.02 0.00 1/85 5767", the 1, 5 and 15
// minute run-queue averages, then running/total tasks and the last PID.
func (fs FS) LoadAvg() ([3]float64, error) {
	p := fs.Path("loadavg")
	b, err := ReadFile(p, LimitLine)
	if err != nil {
		return [3]float64{}, err
	}
	return ParseLoadAvg(b, p)
}

// ParseLoadAvg parses the first three fields of /proc/loadavg.
func ParseLoadAvg(b []byte, path string) ([3]float64, error) {
	var out [3]float64
	i := 0
	for k := range out {
		var f []byte
		f, i = nextField(b, i)
		v, ok := parseFixed(f)
		if !ok {
			return [3]float64{}, parseErr(path, "load average")
		}
		out[k] = v
	}
	return out, nil
}
