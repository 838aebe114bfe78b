package symbolize

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// GoRuntime is where a Go binary's runtime keeps what a stack tracer
// needs to follow a parked goroutine from the thread it left: offsets in
// bytes from the start of runtime.g and runtime.m.
type GoRuntime struct {
	// Version is the Go release the binary was built with ("go1.26.8").
	Version string
	// GM is g.m; GStack is g.stack, the stack's bounds {lo, hi};
	// GSchedPC and GSchedBP are g.sched.pc and g.sched.bp, the goroutine's
	// pc and frame pointer saved when it parked.
	GM, GStack, GSchedPC, GSchedBP uint32
	// MG0 is m.g0 (the thread's scheduler goroutine), MLockedG m.lockedg
	// (the goroutine locked to the thread).
	MG0, MLockedG uint32
}

// goLayouts are the runtime layouts known, by Go release (major.minor: the
// runtime's structs change only between releases), on amd64.
//
// The layout would best come from the binary's own DWARF, but reading it
// takes debug/dwarf's decoder into ctxtop (about 100 KB, more than the
// binary's size budget has left), and Go binaries are often linked with
// -ldflags=-w, which drops DWARF anyway. So the layouts are a table keyed
// by the version the binary's build info records, each checked against
// the DWARF of a binary built by that release (TestGoLayoutMatchesDWARF
// checks the toolchain running the tests), and a binary of a release not
// in it is not followed rather than followed with a guess.
var goLayouts = map[string]GoRuntime{
	"go1.26": {GM: 48, GStack: 0, GSchedPC: 56 + 8, GSchedBP: 56 + 40, MG0: 0, MLockedG: 384},
}

// ErrNotGo means the executable is not a Go program.
var ErrNotGo = errors.New("not a Go program")

// maxBuildInfoBytes is how much of .go.buildinfo is read: its 32-byte
// header and the version string that follows it.
const maxBuildInfoBytes = 32 + 10 + 128

// maxGoBinaries bounds the binaries GoProcess remembers; past it the
// memory is forgotten whole (a rare case: so many Go binaries traced).
const maxGoBinaries = 256

type goBinary struct {
	rt  GoRuntime
	err error
}

// GoProcess reads which Go runtime process pid's executable holds: its
// layout when the stack tracer can follow its parked goroutines, ErrNotGo
// when it is no Go program, or another error whose text says why it
// cannot ("go1.21.4: runtime layout unknown"). The executable is
// opened through /proc/PID/exe (the very file, in any mount namespace) and
// remembered by its device, inode, size and modification time.
func (s *Symbolizer) GoProcess(pid int) (GoRuntime, error) {
	f, err := openRegular(filepath.Join(s.opt.Proc, strconv.Itoa(pid), "exe"))
	if err != nil {
		return GoRuntime{}, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return GoRuntime{}, err
	}
	key := fileKey(&st)
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.goBinaries[key]; ok {
		return b.rt, b.err
	}
	rt, err := goRuntimeOf(f)
	if s.goBinaries == nil || len(s.goBinaries) >= maxGoBinaries {
		s.goBinaries = map[string]goBinary{}
	}
	s.goBinaries[key] = goBinary{rt, err}
	return rt, err
}

// goRuntimeOf reads the Go version from an executable's build info and
// looks its layout up. The file may have been crafted: every read is
// bounded, and a panic in debug/elf becomes an error.
func goRuntimeOf(r io.ReaderAt) (rt GoRuntime, err error) {
	defer func() {
		if p := recover(); p != nil {
			rt, err = GoRuntime{}, fmt.Errorf("%w: ELF reader failed: %v", ErrParse, p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return GoRuntime{}, fmt.Errorf("%w: %v", ErrParse, err)
	}
	// Every Go executable since Go 1.13 has it, stripped or not.
	sec := ef.Section(".go.buildinfo")
	if sec == nil || sec.Type == elf.SHT_NOBITS {
		return GoRuntime{}, ErrNotGo
	}
	b := make([]byte, min(sec.Size, maxBuildInfoBytes))
	if _, err := sec.ReadAt(b, 0); err != nil {
		return GoRuntime{}, fmt.Errorf("%w: .go.buildinfo: %v", ErrParse, err)
	}
	v, err := parseGoVersion(b)
	if err != nil {
		return GoRuntime{}, err
	}
	if ef.Machine != elf.EM_X86_64 {
		return GoRuntime{}, errors.New(v + " not for amd64: parked goroutines are followed on amd64 only")
	}
	rt, ok := goLayouts[goRelease(v)]
	if !ok {
		return GoRuntime{}, errors.New(v + ": runtime layout unknown")
	}
	rt.Version = v
	return rt, nil
}

// parseGoVersion reads the version string of Go 1.18+ build info: the
// magic "\xff Go buildinf:", the pointer size, a flags byte whose bit 2
// says the strings follow inline, padding to 32 bytes, then the version
// as a varint length and bytes. Older build info holds pointers instead;
// those releases are not followed anyway.
func parseGoVersion(b []byte) (string, error) {
	const magic = "\xff Go buildinf:"
	if len(b) < 32 || !bytes.HasPrefix(b, []byte(magic)) {
		return "", fmt.Errorf("%w: .go.buildinfo has no header", ErrParse)
	}
	if b[15]&2 == 0 {
		return "", errors.New("built before Go 1.18: runtime layout unknown")
	}
	n, k := binary.Uvarint(b[32:])
	if k <= 0 || n == 0 || n > uint64(len(b)-32-k) {
		return "", fmt.Errorf("%w: .go.buildinfo version", ErrParse)
	}
	v := sanitize.Name(string(b[32+k : 32+k+int(n)]))
	if !strings.HasPrefix(v, "go1.") {
		return "", errors.New(strconv.Quote(v) + ": runtime layout unknown")
	}
	return v, nil
}

// goRelease is the major.minor of a version: "go1.26" of "go1.26.8",
// "go1.26rc1" and "go1.26.8 X:nodwarf5".
func goRelease(v string) string {
	end := len("go1.")
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	return v[:end]
}
