// Package jvm talks to a running HotSpot JVM the way jcmd does, through its
// attach mechanism, to ask for what the stack view needs and the JVM only
// gives on request: a perf map naming its JIT-compiled methods
// (Compiler.perfmap, JDK 17+) and its flags (VM.flags, for
// -XX:+PreserveFramePointer).
//
// Nothing here runs unless asked: signalling a JVM wakes its attach
// listener thread for good, and a perf map costs the JVM a pass over its
// code cache.
package jvm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

var (
	// ErrNotJVM means the process has no libjvm.so mapped.
	ErrNotJVM = errors.New("not a HotSpot JVM (no libjvm.so mapped)")
	// ErrGone means the process does not exist (or exited).
	ErrGone = errors.New("no such process")
)

// Process is what the attach mechanism needs to know of a JVM, read from
// its /proc files.
type Process struct {
	Proc string // the procfs root, "/proc"
	PID  int    // in ctxtop's PID namespace
	// NSPID is the PID in the JVM's own namespace: the number it names its
	// attach socket and its perf map with.
	NSPID int
	// UID and GID are the JVM's effective IDs: HotSpot only answers a
	// peer with the same (or root, in its own user namespace).
	UID, GID int
	// CatchesQuit: SIGQUIT is handled. HotSpot started with -Xrs leaves it
	// at the default action, which would end the JVM.
	CatchesQuit bool
	Comm        string
	// perfData is the path, in the JVM's mount namespace, of the
	// performance data file it maps; "" for none.
	perfData string
}

// Inspect reads pid's status and maps, and returns ErrNotJVM unless it is
// a HotSpot JVM (libjvm.so mapped). Errors are one line, naming the PID.
func Inspect(proc string, pid int) (*Process, error) {
	dir := filepath.Join(proc, strconv.Itoa(pid))
	b, err := procfs.ReadFile(filepath.Join(dir, "status"), procfs.LimitStatus)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrGone)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	p, err := parseStatus(b)
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	p.Proc, p.PID = proc, pid
	if p.NSPID == 0 {
		p.NSPID = pid // kernels before 4.1: no NSpid line, no PID namespaces
	}
	jvm, perfData, err := mapsLibjvm(filepath.Join(dir, "maps"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("process %d: %w", pid, ErrGone)
		}
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	if !jvm {
		return nil, fmt.Errorf("process %d (%s): %w", pid, p.Comm, ErrNotJVM)
	}
	p.perfData = perfData
	return p, nil
}

// parseStatus takes Name, Uid, Gid (effective: the second field), the
// innermost NSpid and whether SigCgt has SIGQUIT from a status file.
func parseStatus(b []byte) (*Process, error) {
	var p Process
	var uid, gid bool
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(val)
		switch string(key) {
		case "Name":
			p.Comm = strings.TrimSpace(string(val))
		case "Uid", "Gid":
			if len(f) < 2 {
				return nil, fmt.Errorf("status: bad %s line", key)
			}
			n, err := strconv.Atoi(string(f[1]))
			if err != nil {
				return nil, fmt.Errorf("status: bad %s line", key)
			}
			if key[0] == 'U' {
				p.UID, uid = n, true
			} else {
				p.GID, gid = n, true
			}
		case "NSpid":
			if len(f) > 0 {
				p.NSPID, _ = strconv.Atoi(string(f[len(f)-1]))
			}
		case "SigCgt":
			if len(f) == 1 {
				mask, err := strconv.ParseUint(string(f[0]), 16, 64)
				if err == nil {
					p.CatchesQuit = mask&(1<<(3-1)) != 0 // SIGQUIT is 3
				}
			}
		}
	}
	if !uid || !gid {
		return nil, errors.New("status: no Uid or Gid line")
	}
	return &p, nil
}

// mapsLibjvm tells whether a maps file maps libjvm.so, and returns the
// path of the performance data file it maps ("" for none).
func mapsLibjvm(path string) (jvm bool, perfData string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.Contains(line, []byte("/libjvm.so")) {
			jvm = true
		}
		if i := bytes.Index(line, []byte(" /")); i >= 0 && perfData == "" && bytes.Contains(line[i:], []byte("/hsperfdata_")) {
			perfData = string(bytes.TrimSpace(line[i:]))
		}
	}
	return jvm, perfData, sc.Err()
}

// Flags asks the JVM for its flags (VM.flags: those set on the command
// line, in the environment or by ergonomics).
func (p *Process) Flags(timeout time.Duration) (string, error) {
	return p.Command("VM.flags", timeout)
}

// PreservesFramePointer tells from VM.flags output whether JIT code keeps
// frame pointers.
func PreservesFramePointer(flags string) bool {
	return lastFlag(strings.Fields(flags), false)
}

// lastFlag is the value of PreserveFramePointer the last of args that
// sets it gives, def when none does (the JVM takes the last).
func lastFlag(args []string, def bool) bool {
	for _, a := range args {
		switch a {
		case "-XX:+PreserveFramePointer":
			def = true
		case "-XX:-PreserveFramePointer":
			def = false
		}
	}
	return def
}

// PreserveFramePointerFromCmdline tells, without asking the JVM, whether
// it was started with -XX:+PreserveFramePointer, from its command line
// and the environment variables that add options (an @argfile or a
// -XX:Flags= file is not read: Options has those). The default, off, is
// HotSpot's on x86-64 and arm64.
func PreserveFramePointerFromCmdline(proc string, pid int) (bool, error) {
	dir := filepath.Join(proc, strconv.Itoa(pid))
	cmd, err := procfs.ReadFile(filepath.Join(dir, "cmdline"), 1<<20)
	if err != nil {
		return false, err
	}
	env, _ := procfs.ReadFile(filepath.Join(dir, "environ"), 1<<20) // other users' is unreadable: go by the command line
	// In HotSpot's order: JAVA_TOOL_OPTIONS, JDK_JAVA_OPTIONS (which the
	// java launcher puts before its arguments, out of /proc's sight), the
	// command line, _JAVA_OPTIONS.
	opts := [4][]string{2: strings.Split(string(cmd), "\x00")}
	for _, kv := range bytes.Split(env, []byte{0}) {
		for i, name := range [...]string{"JAVA_TOOL_OPTIONS=", "JDK_JAVA_OPTIONS=", "", "_JAVA_OPTIONS="} {
			if v, ok := bytes.CutPrefix(kv, []byte(name)); ok && name != "" {
				opts[i] = strings.Fields(string(v))
			}
		}
	}
	on := false
	for _, o := range opts {
		on = lastFlag(o, on)
	}
	return on, nil
}

// preservesFramePointer tells whether the JVM keeps frame pointers in JIT
// code, from the options it parsed (Options); from its command line and
// environment when it keeps no performance data.
func (p *Process) preservesFramePointer() (bool, error) {
	if opts, err := p.Options(); err == nil {
		return lastFlag(opts, false), nil
	}
	return PreserveFramePointerFromCmdline(p.Proc, p.PID)
}

// AskPerfMap asks process pid for a perf map and says what it did in one
// line, "asked JVM 1234 for a perf map: 812 methods", or why it could not.
func AskPerfMap(proc string, pid int, timeout time.Duration) (string, error) {
	p, err := Inspect(proc, pid)
	if err != nil {
		return "", err
	}
	n, err := p.PerfMap(timeout)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("asked JVM %d for a perf map: %d methods", pid, n), nil
}

// Notes are what a view says of process pid's Java frames, one line
// each: that it has no perf map (its JIT frames are then unnamed), that
// its JIT code keeps no frame pointers (stacks then stop at the first JIT
// frame). None for a process that is no HotSpot JVM. It reads /proc only
// and never signals the JVM. Without a perf map, its note comes first.
func Notes(proc string, pid int) (notes []string, perfMap bool) {
	p, err := Inspect(proc, pid)
	if err != nil {
		return nil, false
	}
	name := "perf-" + strconv.Itoa(p.NSPID) + ".map"
	fi, err := os.Stat(filepath.Join(proc, strconv.Itoa(pid), "root", "tmp", name))
	switch {
	case err != nil:
		notes = append(notes, fmt.Sprintf("JVM %d: no perf map, its JIT frames are unnamed", pid))
	case stale(proc, pid, fi.ModTime()):
		notes = append(notes, fmt.Sprintf("JVM %d: its perf map predates it, JIT frames unnamed", pid))
	default:
		perfMap = true
	}
	if fp, err := p.preservesFramePointer(); err == nil && !fp {
		notes = append(notes, fmt.Sprintf("JVM %d: no -XX:+PreserveFramePointer, so Java stacks end in JIT code", pid))
	}
	return notes, perfMap
}

// stale reports whether a file last modified at mtime is older than
// process pid, as the symbolizer judges its perf map.
func stale(proc string, pid int, mtime time.Time) bool {
	started, err := procfs.Started(proc, pid)
	return err == nil && procfs.Predates(mtime, started)
}
