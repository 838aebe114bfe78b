package procfs

// Hand-rolled scanners: the per-thread path must not allocate, and
// strconv needs strings.

// parseUint parses a run of ASCII digits. ok is false for an empty run, a
// non-digit, or overflow.
func parseUint(b []byte) (v uint64, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (^uint64(0)-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// parseFixed parses a non-negative decimal like "12.34" into a float64.
func parseFixed(b []byte) (float64, bool) {
	dot := -1
	for i, c := range b {
		if c == '.' {
			dot = i
			break
		}
	}
	if dot < 0 {
		v, ok := parseUint(b)
		return float64(v), ok
	}
	ip, ok := parseUint(b[:dot])
	if !ok {
		return 0, false
	}
	frac := b[dot+1:]
	if len(frac) == 0 || len(frac) > 9 {
		return 0, false
	}
	fp, ok := parseUint(frac)
	if !ok {
		return 0, false
	}
	div := 1.0
	for range frac {
		div *= 10
	}
	return float64(ip) + float64(fp)/div, true
}

// nextField returns the next run of non-blank bytes in b starting at i, and
// the index just past it. Blanks are spaces and tabs.
func nextField(b []byte, i int) (field []byte, next int) {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	start := i
	for i < len(b) && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' {
		i++
	}
	return b[start:i], i
}

// nextLine returns the line starting at i (without its newline) and the index
// of the following line.
func nextLine(b []byte, i int) (line []byte, next int) {
	start := i
	for i < len(b) && b[i] != '\n' {
		i++
	}
	if i < len(b) {
		return b[start:i], i + 1
	}
	return b[start:i], i
}

func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}
