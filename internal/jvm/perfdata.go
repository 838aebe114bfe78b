package jvm

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// HotSpot publishes its performance counters in a file it maps shared,
// /tmp/hsperfdata_USER/PID (what jstat and jcmd PerfCounter.print read),
// unless started with -XX:-UsePerfData. Among them are the JVM's options
// as it parsed them: java.rt.vmArgs holds every -XX and -X option from
// wherever it came (the command line, an @argfile the launcher expanded,
// JDK_JAVA_OPTIONS, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS), in the order they
// took effect, and java.rt.vmFlags those of a -XX:Flags= file, which
// come first. Reading them needs no attach and wakes nothing.
//
// The layout (HotSpot's perfData.hpp, stable since JDK 1.4.2): a 32-byte
// prologue (magic 0xcafec0c0 in big-endian bytes, then the byte order of
// what follows, versions, and at 24 the offset of the first entry and at
// 28 their number), then entries, each with its length, the offsets of
// its name and data from its start, its vector length and type ('B' for
// bytes: strings are NUL-terminated byte vectors).

const (
	perfDataPrologue = 32
	perfDataEntry    = 20
	// perfDataMax bounds what is read: the file is 32 KB by default
	// (-XX:PerfDataMemorySize), its strings at the front.
	perfDataMax = 1 << 20
)

var errPerfData = errors.New("not a HotSpot performance data file")

// perfDataStrings returns the string entries of a performance data file
// named in want, by name.
func perfDataStrings(b []byte, want ...string) (map[string]string, error) {
	if len(b) < perfDataPrologue || !bytes.Equal(b[:4], []byte{0xca, 0xfe, 0xc0, 0xc0}) {
		return nil, errPerfData
	}
	var order binary.ByteOrder = binary.BigEndian
	if b[4] == 1 {
		order = binary.LittleEndian
	}
	off, n := order.Uint32(b[24:]), order.Uint32(b[28:])
	out := make(map[string]string, len(want))
	for ; n > 0 && len(out) < len(want); n-- {
		if uint64(off)+perfDataEntry > uint64(len(b)) {
			return out, fmt.Errorf("%w: entry at %d past its end", errPerfData, off)
		}
		e := b[off:]
		length, nameOff, vecLen, dataOff := order.Uint32(e), order.Uint32(e[4:]), order.Uint32(e[8:]), order.Uint32(e[16:])
		if length < perfDataEntry || uint64(length) > uint64(len(e)) || nameOff >= length || dataOff > length {
			return out, fmt.Errorf("%w: entry at %d malformed", errPerfData, off)
		}
		e = e[:length]
		name := unix.ByteSliceToString(e[nameOff:])
		if e[12] == 'B' && vecLen > 0 && slices.Contains(want, name) {
			end := uint64(dataOff) + uint64(vecLen)
			if end > uint64(length) {
				end = uint64(length)
			}
			out[name] = unix.ByteSliceToString(e[dataOff:end])
		}
		off += length
	}
	return out, nil
}

// Options are the JVM's options as it parsed them, from its performance
// data file: a -XX:Flags= file's first, then every other in the order
// HotSpot took them. An error when the JVM keeps no such file
// (-XX:-UsePerfData) or it cannot be read.
func (p *Process) Options() ([]string, error) {
	if p.perfData == "" {
		return nil, fmt.Errorf("JVM %d keeps no performance data file (-XX:-UsePerfData)", p.PID)
	}
	// The path is the JVM's own, in its mount namespace.
	b, err := procfs.ReadFile(filepath.Join(p.Proc, strconv.Itoa(p.PID), "root", p.perfData), perfDataMax)
	if err != nil {
		return nil, fmt.Errorf("JVM %d: %w", p.PID, err)
	}
	s, err := perfDataStrings(b, "java.rt.vmFlags", "java.rt.vmArgs")
	if err != nil {
		return nil, fmt.Errorf("JVM %d: %w", p.PID, err)
	}
	args, ok := s["java.rt.vmArgs"]
	if !ok {
		return nil, fmt.Errorf("JVM %d: %w: no java.rt.vmArgs", p.PID, errPerfData)
	}
	return append(strings.Fields(s["java.rt.vmFlags"]), strings.Fields(args)...), nil
}
