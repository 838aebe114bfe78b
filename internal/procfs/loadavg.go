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

// LoadAvgTasks is the end of a loadavg line: "1/85 5767", the tasks
// running, the tasks in all (threads included), and the last PID the
// kernel handed out in the reader's PID namespace.
type LoadAvgTasks struct {
	Running, Total, LastPID uint64
}

// ParseLoadAvgTasks parses the fourth and fifth fields of /proc/loadavg.
func ParseLoadAvgTasks(b []byte, path string) (LoadAvgTasks, error) {
	i := 0
	for range 3 {
		_, i = nextField(b, i)
	}
	f, i := nextField(b, i)
	last, _ := nextField(b, i)
	slash := -1
	for k, c := range f {
		if c == '/' {
			slash = k
			break
		}
	}
	var t LoadAvgTasks
	var ok1, ok2, ok3 bool
	if slash > 0 {
		t.Running, ok1 = parseUint(f[:slash])
		t.Total, ok2 = parseUint(f[slash+1:])
	}
	t.LastPID, ok3 = parseUint(last)
	if !ok1 || !ok2 || !ok3 {
		return LoadAvgTasks{}, parseErr(path, "tasks")
	}
	return t, nil
}
