package procfs

import "bytes"

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

// maxThreads bounds a thread count: PID_MAX_LIMIT, as many tasks as the
// kernel can number.
const maxThreads = 4 << 20

// ParseLoadAvgThreads is the host's thread count from /proc/loadavg: the
// number after the slash of its fourth field ("3/1234": runnable and all
// threads), counted in full where sysinfo(2)'s count wraps past 65,535.
// ok is false when the field is missing or malformed.
func ParseLoadAvgThreads(b []byte) (n int, ok bool) {
	var f []byte
	i := 0
	for range 4 {
		f, i = nextField(b, i)
	}
	slash := bytes.IndexByte(f, '/')
	if slash < 0 {
		return 0, false
	}
	v, ok := parseUint(f[slash+1:])
	if !ok || v > maxThreads {
		return 0, false
	}
	return int(v), true
}

// ParseLoadAvgLastPID parses the last field of /proc/loadavg ("0.00 0.02
// 0.00 1/85 5767"): the last PID the kernel handed out in the reader's PID
// namespace.
func ParseLoadAvgLastPID(b []byte, path string) (uint64, error) {
	end := len(b)
	for end > 0 && (b[end-1] == '\n' || b[end-1] == ' ') {
		end--
	}
	start := end
	for start > 0 && b[start-1] != ' ' {
		start--
	}
	// The field before is running/total, which a PID never follows alone.
	v, ok := parseUint(b[start:end])
	if !ok || start == 0 || bytes.IndexByte(b[:start], '/') < 0 {
		return 0, parseErr(path, "last pid")
	}
	return v, nil
}
