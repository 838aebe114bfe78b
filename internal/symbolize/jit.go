package symbolize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// perfMap is a process's perf map as last read, and how to tell it changed.
type perfMap struct {
	loaded    bool
	name      string // "perf-NSPID.map"
	tab       table
	nspid     int
	ino       uint64
	size      int64
	mtime     unix.Timespec
	checkedAt time.Time
	err       error
}

// jitFrame names f from the process's perf map, read on the first address
// no file mapping holds and again (if the file grew) on a miss at most
// once per MinRefresh.
func (s *Symbolizer) jitFrame(p *process, f *Frame, look uint64, now time.Time) {
	pm := &p.perf
	i := -1
	if pm.loaded {
		i = pm.tab.lookup(look)
	}
	if i < 0 && (pm.checkedAt.IsZero() || now.Sub(pm.checkedAt) >= s.opt.MinRefresh) {
		pm.checkedAt = now
		pm.err = s.readPerfMap(p)
		if pm.loaded {
			i = pm.tab.lookup(look)
		}
	}
	if i < 0 {
		return
	}
	f.Kind = JIT
	f.Function = pm.tab.name(i)
	f.Offset = f.Addr - pm.tab.syms[i].start
	f.Object = pm.name
	f.ObjectAddr = f.Addr
}

// readPerfMap (re)reads /proc/PID/root/tmp/perf-NSPID.map when it changed.
// NSPID is the process's PID in its own namespace (the last NSpid of its
// status), the number a containerized JIT names its file with.
func (s *Symbolizer) readPerfMap(p *process) error {
	pm := &p.perf
	pidDir := filepath.Join(s.opt.Proc, strconv.Itoa(p.pid))
	if pm.nspid == 0 {
		b, err := procfs.ReadFile(filepath.Join(pidDir, "status"), procfs.LimitStatus)
		if err != nil {
			return err
		}
		pm.nspid = p.pid // kernels before 4.1 have no NSpid and no PID namespaces worth naming
		if ns, ok := parseNSpid(b); ok {
			pm.nspid = ns
		}
	}
	name := "perf-" + strconv.Itoa(pm.nspid) + ".map"
	f, err := openInRoot(filepath.Join(pidDir, "root"), "/tmp/"+name)
	if err != nil {
		*pm = perfMap{nspid: pm.nspid, checkedAt: pm.checkedAt}
		return err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return err
	}
	// A map last written before the process started is an earlier holder
	// of its PID's (a JIT that ended without removing it, and PIDs wrap):
	// its names would be another program's, so none is taken from it. The
	// start is read each time a map is found (at most once per
	// MinRefresh): a PID reused by a process with the same mappings keeps
	// this entry.
	started, err := procfs.Started(s.opt.Proc, p.pid)
	if err != nil {
		return err
	}
	if procfs.Predates(time.Unix(st.Mtim.Unix()), started) {
		*pm = perfMap{nspid: pm.nspid, checkedAt: pm.checkedAt}
		return fmt.Errorf("%s: %w", name, ErrStalePerfMap)
	}
	if pm.loaded && st.Ino == pm.ino && st.Size == pm.size && st.Mtim == pm.mtime {
		return nil
	}
	if st.Size > int64(s.opt.PerfMapBytes) {
		return fmt.Errorf("%s: %w: %d bytes, over the %d-byte cap", name, ErrTooLarge, st.Size, s.opt.PerfMapBytes)
	}
	// Read what fstat promised and no more: the JIT keeps appending.
	b := make([]byte, st.Size)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF {
		return err
	}
	raw, err := parsePerfMap(b[:n], s.opt.PerfMapEntries)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	*pm = perfMap{loaded: true, name: name, tab: buildTable(raw, 0, s.opt.FullNames), nspid: pm.nspid,
		ino: st.Ino, size: st.Size, mtime: st.Mtim, checkedAt: pm.checkedAt}
	return nil
}

// ErrStalePerfMap: a perf map written before its process started.
var ErrStalePerfMap = errors.New("written before the process started: another process's, not used")

// parseNSpid returns the innermost PID of a status file's NSpid line
//
//	NSpid:	4242	1
//
// (the process's PID in each nested PID namespace, outermost first).
func parseNSpid(b []byte) (int, bool) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		rest, ok := bytes.CutPrefix(line, []byte("NSpid:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		v, ok := decField(f[len(f)-1])
		if !ok || v == 0 || v > 1<<22 {
			return 0, false
		}
		return int(v), true
	}
	return 0, false
}
