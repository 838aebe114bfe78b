package symbolize

import (
	"container/list"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

var (
	// ErrParse wraps every malformed-content error (maps, perf map,
	// kallsyms, an ELF file), with the file and line.
	ErrParse = errors.New("malformed")
	// ErrTooLarge means a file or table is bigger than its cap.
	ErrTooLarge = errors.New("too large")
	// ErrKernelHidden means /proc/kallsyms reads zeros for this reader
	// (kernel.kptr_restrict, no CAP_SYSLOG): kernel frames cannot be named,
	// show "kernel symbols hidden".
	ErrKernelHidden = errors.New("kernel symbols hidden")
)

// Addressing says which addresses of a stack are return addresses.
type Addressing uint8

const (
	// StackAddresses is the convention of bpf_get_stackid and perf: the
	// first address is where the thread was (its instruction pointer), every
	// later one a return address, looked up as address-1 so that a call
	// that is the last instruction of a function (a call to a noreturn
	// function) names the caller and not whatever follows it.
	StackAddresses Addressing = iota
	// ReturnAddresses treats every address as a return address, as
	// runtime.Callers and backtrace(3) give them.
	ReturnAddresses
	// ExactAddresses looks every address up as given.
	ExactAddresses
)

// lookupAddr is the address whose function names the frame at index i.
func (a Addressing) lookupAddr(i int, addr uint64) uint64 {
	if addr > 0 && (a == ReturnAddresses || (a == StackAddresses && i > 0)) {
		return addr - 1
	}
	return addr
}

// Kind is where a frame's code lives.
type Kind uint8

const (
	// User is code of a mapped file, or an address no mapping holds.
	User Kind = iota
	// JIT is code named by the process's perf map.
	JIT
	// Kernel is kernel code.
	Kernel
)

// Frame is one symbolized address.
type Frame struct {
	// Addr is the address as given.
	Addr uint64
	Kind Kind
	// Function is the function's name, sanitized (C++ and Rust demangled),
	// "" when nothing names it. Never guessed.
	Function string
	// Offset is Addr minus the function's start.
	Offset uint64
	// Object is the base name of the mapped file ("libc.so.6"), a pseudo
	// mapping's name ("[vdso]"), "[kernel]" or "[MODULE]", the perf map's
	// name for JIT code, "" when no mapping holds Addr. Sanitized.
	Object string
	// ObjectAddr is Addr as the object's own tools see it: the ELF virtual
	// address (what nm prints and addr2line -e FILE takes) for a file,
	// Addr itself for kernel code, JIT code and anonymous memory.
	ObjectAddr uint64
	// BuildID is the object's GNU build id in hex, "" if it has none.
	BuildID string
}

// String is the function's name, else the object and the address in it
// ("libfoo.so+0x1234"), else the bare address.
func (f Frame) String() string {
	switch {
	case f.Function != "":
		return f.Function
	case f.Object != "":
		return f.Object + "+0x" + strconv.FormatUint(f.ObjectAddr, 16)
	}
	return "0x" + strconv.FormatUint(f.Addr, 16)
}

// Options configure a Symbolizer. Zero limits take the defaults named.
type Options struct {
	// Proc is the procfs root, /proc on a live system.
	Proc string
	// CacheBytes bounds the function tables kept for files, least
	// recently used first out (default 64 MiB). One file bigger than the
	// budget is still kept while it is the only one.
	CacheBytes int
	// MaxProcesses bounds the processes whose mappings and perf maps are
	// kept, least recently used first out (default 1,024).
	MaxProcesses int
	// SymtabBytes caps one .symtab or .dynsym section with its strings
	// (default 16 MiB, about 700,000 symbols); a bigger one is not read.
	SymtabBytes int
	// PclntabBytes caps a Go binary's pclntab (default 64 MiB).
	PclntabBytes int
	// PerfMapBytes and PerfMapEntries cap one perf map (defaults 64 MiB,
	// 1,048,576 entries).
	PerfMapBytes, PerfMapEntries int
	// FullNames shows C++ names with their argument and template lists.
	FullNames bool
	// MapsMaxAge is how long a process's mappings are trusted (default
	// 2 s); a lookup that finds no mapping re-reads them sooner, at most
	// once per MinRefresh (default 100 ms).
	MapsMaxAge, MinRefresh time.Duration
	// DebugRoot is where separate debug files are looked for after the
	// process's own root (default "/"); see debugfile.go.
	DebugRoot string
	// Debuginfod, when set, fetches debug files no local place has.
	Debuginfod *Debuginfod
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.CacheBytes, 64<<20)
	def(&o.MaxProcesses, 1024)
	def(&o.SymtabBytes, 16<<20)
	def(&o.PclntabBytes, 64<<20)
	def(&o.PerfMapBytes, 64<<20)
	def(&o.PerfMapEntries, 1<<20)
	if o.MapsMaxAge <= 0 {
		o.MapsMaxAge = 2 * time.Second
	}
	if o.MinRefresh <= 0 {
		o.MinRefresh = 100 * time.Millisecond
	}
	if o.DebugRoot == "" {
		o.DebugRoot = "/"
	}
	return o
}

// maxMapsBytes caps /proc/PID/maps: about 100 bytes a line, and a process
// with vm.max_map_count raised to 262,144 (what Elasticsearch asks for)
// stays well below.
const maxMapsBytes = 64 << 20

// maxKallsymsBytes caps /proc/kallsyms (5 MiB for 120,000 symbols here).
const maxKallsymsBytes = 128 << 20

// Symbolizer names user and kernel addresses. It is safe for concurrent
// use; calls are serialized.
type Symbolizer struct {
	opt Options

	mu      sync.Mutex
	objects objectCache
	procs   map[int]*process
	tick    uint64 // orders processes by last use

	kernelOnce bool
	kernel     table
	kernelErr  error

	// goBinaries remembers GoProcess's answer per executable.
	goBinaries map[string]goBinary

	// noMapFiles skips /proc/PID/map_files, to test the fallback.
	noMapFiles bool

	debuginfod *debuginfod // nil: no fetching
	// noDebugFiles skips the search for debug files, to compare.
	noDebugFiles bool
}

// New returns a Symbolizer reading the procfs at opt.Proc.
func New(opt Options) (*Symbolizer, error) {
	if opt.Proc == "" {
		return nil, errors.New("symbolize: no procfs root given")
	}
	opt = opt.withDefaults()
	s := &Symbolizer{
		opt:     opt,
		objects: objectCache{budget: opt.CacheBytes, byKey: map[string]*list.Element{}},
		procs:   map[int]*process{},
	}
	if opt.Debuginfod != nil && len(opt.Debuginfod.URLs) > 0 {
		s.debuginfod = newDebuginfod(*opt.Debuginfod)
	}
	return s, nil
}

// Forget drops what is kept for pid (the process exited).
func (s *Symbolizer) Forget(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.procs, pid)
}

// process is what is kept per PID: its executable mappings and perf map.
type process struct {
	pid    int
	maps   []procMapping // executable mappings, sorted by start
	readAt time.Time
	used   uint64
	perf   perfMap
}

type procMapping struct {
	Mapping
	object string // sanitized base name
	key    string // cache key of the object once opened
	err    error  // why the file could not be opened or read; not retried until the maps change
	tried  bool
}

func (m *procMapping) same(o *procMapping) bool {
	return m.Start == o.Start && m.End == o.End && m.Offset == o.Offset && m.Inode == o.Inode && m.Path == o.Path
}

func (p *process) find(addr uint64) *procMapping {
	i, _ := slices.BinarySearchFunc(p.maps, addr, func(m procMapping, a uint64) int {
		if m.Start > a {
			return 1
		}
		return -1
	})
	if i--; i < 0 || addr >= p.maps[i].End {
		return nil
	}
	return &p.maps[i]
}

// User symbolizes addresses of process pid's user stack. A process that
// has exited (or never existed) is normal: its frames come back with only
// their addresses and no error. Other failures to read the process's
// mappings are returned with the same unnamed frames.
func (s *Symbolizer) User(pid int, addrs []uint64, mode Addressing) ([]Frame, error) {
	return s.user(pid, addrs, mode, nil)
}

// UserExact is User with StackAddresses, except that the frames exact
// reports true for are looked up as given: a stack an unwinder walked
// through a signal frame, whose trampoline's address (a return address
// to its very first byte) and the interrupted instruction are not
// return addresses to be looked up one byte early.
func (s *Symbolizer) UserExact(pid int, addrs []uint64, exact func(i int) bool) ([]Frame, error) {
	return s.user(pid, addrs, StackAddresses, exact)
}

func (s *Symbolizer) user(pid int, addrs []uint64, mode Addressing, exact func(i int) bool) ([]Frame, error) {
	frames := make([]Frame, len(addrs))
	for i, a := range addrs {
		frames[i] = Frame{Addr: a, Kind: User}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	p, err := s.process(pid, now)
	if err != nil || p == nil {
		return frames, err
	}
	refreshed := false
	for i := range frames {
		f := &frames[i]
		look := mode.lookupAddr(i, f.Addr)
		if exact != nil && exact(i) {
			look = f.Addr
		}
		m := p.find(look)
		if m == nil && !refreshed && now.Sub(p.readAt) >= s.opt.MinRefresh {
			// New code mapped since (dlopen, a JIT's new region): read again.
			refreshed = true
			if err := s.refresh(p, now); err != nil {
				return frames, nil // the process exited meanwhile
			}
			m = p.find(look)
		}
		if m != nil && m.FileBacked() {
			s.fileFrame(p, m, f, look)
			continue
		}
		if m != nil {
			f.Object = m.object
			f.ObjectAddr = f.Addr
		}
		s.jitFrame(p, f, look, now)
	}
	return frames, nil
}

// process returns pid's entry, reading its mappings when new or stale; nil
// with no error when the process is gone.
func (s *Symbolizer) process(pid int, now time.Time) (*process, error) {
	s.tick++
	p := s.procs[pid]
	if p == nil {
		p = &process{pid: pid}
	}
	p.used = s.tick
	if p.readAt.IsZero() || now.Sub(p.readAt) >= s.opt.MapsMaxAge {
		if err := s.refresh(p, now); err != nil {
			delete(s.procs, pid)
			if gone(err) {
				return nil, nil
			}
			return nil, err
		}
	}
	if s.procs[pid] == nil {
		s.procs[pid] = p
		s.evictProcesses()
	}
	return p, nil
}

// gone reports whether err means the process (or task) no longer exists.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH)
}

// refresh re-reads pid's mappings, keeping what was learnt about the ones
// that did not change. When none of the old ones is left, the PID has
// likely been reused by a new process, and its perf map is dropped too.
func (s *Symbolizer) refresh(p *process, now time.Time) error {
	b, err := procfs.ReadFile(filepath.Join(s.opt.Proc, strconv.Itoa(p.pid), "maps"), maxMapsBytes)
	if err != nil {
		return err
	}
	all, err := parseMaps(b)
	if err != nil {
		return err
	}
	var maps []procMapping
	for _, m := range all {
		if m.Exec() {
			pm := procMapping{Mapping: m}
			if m.Path != "" {
				pm.object = sanitize.Name(filepath.Base(m.Path))
			}
			maps = append(maps, pm)
		}
	}
	// maps is sorted by start as the kernel prints it, but a fixture or a
	// hostile root need not be: binary search needs it sorted. sort.Slice,
	// not slices.SortFunc: the generic sort compiled for this struct cost
	// the binary 10 KB, and both are the same pattern-defeating quicksort,
	// which finds a list already in order in about one pass.
	sort.Slice(maps, func(i, j int) bool { return maps[i].Start < maps[j].Start })
	kept := 0
	for i := range maps {
		if old := p.find(maps[i].Start); old != nil && old.same(&maps[i]) {
			maps[i] = *old
			kept++
		}
	}
	if kept == 0 && len(p.maps) > 0 {
		p.perf = perfMap{}
	}
	p.maps, p.readAt = maps, now
	return nil
}

func (s *Symbolizer) evictProcesses() {
	for len(s.procs) > s.opt.MaxProcesses {
		oldest := -1
		var used uint64
		for pid, p := range s.procs {
			if oldest < 0 || p.used < used {
				oldest, used = pid, p.used
			}
		}
		delete(s.procs, oldest)
	}
}

// fileFrame names an address inside a file mapping.
func (s *Symbolizer) fileFrame(p *process, m *procMapping, f *Frame, look uint64) {
	f.Object = m.object
	obj := s.mappedObject(p, m)
	if obj == nil {
		f.ObjectAddr = f.Addr - m.Start + m.Offset // the file offset is all that is known
		return
	}
	f.BuildID = obj.buildID
	v, ok := obj.vaddr(f.Addr - m.Start + m.Offset)
	lv, lok := obj.vaddr(look - m.Start + m.Offset)
	if !ok || !lok {
		f.ObjectAddr = f.Addr - m.Start + m.Offset
		return
	}
	f.ObjectAddr = v
	if i := obj.syms.lookup(lv); i >= 0 {
		f.Function = obj.syms.name(i)
		f.Offset = v - obj.syms.syms[i].start
	}
}

// mappedObject returns the object of m, opening and reading it the first
// time, or nil when it cannot be read.
func (s *Symbolizer) mappedObject(p *process, m *procMapping) *object {
	if m.tried {
		if m.err != nil {
			return nil
		}
		if obj := s.objects.get(m.key); obj != nil {
			if !obj.debugPending || !s.debuginfod.ready(obj.buildID) {
				return obj
			}
			// Its debug file has arrived (or will not): read it again.
			s.objects.remove(s.objects.byKey[m.key])
		}
	}
	m.tried = true
	obj, key, err := s.openObject(p.pid, m)
	m.key, m.err = key, err
	return obj
}

// openObject opens the file m maps and finds or loads its object. The file
// is opened through /proc/PID/map_files/START-END, which is the very file
// mapped, deleted or replaced since, in whatever mount namespace, and needs
// CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE). Without it, the path from the
// maps line is opened inside the process's root, /proc/PID/root, with
// openat2 RESOLVE_IN_ROOT so that a symlink in a container resolves inside
// the container and never to a file of the host, and the file's inode must
// match the one in maps (only the inode: btrfs and overlayfs report another
// st_dev than maps prints).
func (s *Symbolizer) openObject(pid int, m *procMapping) (*object, string, error) {
	f, statKey, err := openMapped(s.opt.Proc, pid, m.Mapping, s.noMapFiles)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if obj := s.objects.get(statKey); obj != nil {
		return obj, statKey, nil
	}
	lim := objectLimits{symtabBytes: uint64(s.opt.SymtabBytes), pclntabBytes: uint64(s.opt.PclntabBytes), fullNames: s.opt.FullNames}
	if !s.noDebugFiles {
		lim.debug = s.findDebug(pid, m)
	}
	obj, err := loadObject(f, lim)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", sanitize.Name(m.Path), err)
	}
	if obj.buildID != "" {
		// The same file seen through another inode (another container's
		// copy of a library): reuse what is kept.
		if kept := s.objects.get("b:" + obj.buildID); kept != nil && !kept.debugPending {
			s.objects.alias(statKey, kept)
			return kept, statKey, nil
		}
		obj.keys = append(obj.keys, "b:"+obj.buildID)
	}
	obj.keys = append(obj.keys, statKey)
	s.objects.put(obj)
	return obj, statKey, nil
}

// OpenMapped opens the file mapping m of process pid maps, the way the
// Symbolizer does (see openObject), and returns it with a key that tells
// the file from another and from its own older versions, for callers that
// keep their own tables per file (the unwinder's CFI).
func OpenMapped(proc string, pid int, m Mapping) (*os.File, string, error) {
	return openMapped(proc, pid, m, false)
}

func openMapped(proc string, pid int, m Mapping, noMapFiles bool) (*os.File, string, error) {
	pidDir := filepath.Join(proc, strconv.Itoa(pid))
	var f *os.File
	var err error
	if !noMapFiles {
		// A failure here is not the error: the root path below is tried.
		f, _ = openRegular(filepath.Join(pidDir, "map_files", strconv.FormatUint(m.Start, 16)+"-"+strconv.FormatUint(m.End, 16)))
	}
	if f == nil {
		f, err = openInRoot(filepath.Join(pidDir, "root"), m.Path)
		if err != nil {
			return nil, "", err
		}
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, "", err
	}
	if st.Ino != m.Inode {
		f.Close()
		return nil, "", fmt.Errorf("%s: inode %d, not the mapped %d: the file was replaced", sanitize.Name(m.Path), st.Ino, m.Inode)
	}
	return f, fileKey(&st), nil
}

// openFlags never block on a FIFO and never make a terminal ours.
const openFlags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY

// openRegular opens path (following the magic link map_files entries are)
// and insists on a regular file.
func openRegular(path string) (*os.File, error) {
	fd, err := unix.Open(path, openFlags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return regular(fd, path)
}

// openInRoot opens path inside the directory root as if root were "/":
// absolute symlinks and ".." stay inside it, magic links are refused.
func openInRoot(root, path string) (*os.File, error) {
	dir, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dir)
	fd, err := unix.Openat2(dir, path, &unix.OpenHow{
		Flags:   openFlags,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return nil, &os.PathError{Op: "openat2", Path: sanitize.Name(path), Err: err}
	}
	return regular(fd, path)
}

func regular(fd int, path string) (*os.File, error) {
	if err := procfs.CheckRegular(fd); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: sanitize.Name(path), Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Kernel symbolizes kernel addresses through /proc/kallsyms, read on first
// use and kept: modules loaded later are not named. When kallsyms hides
// its addresses, every frame comes back unnamed ("[kernel]+0x...") with
// ErrKernelHidden.
func (s *Symbolizer) Kernel(addrs []uint64, mode Addressing) ([]Frame, error) {
	frames := make([]Frame, len(addrs))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.kernelOnce {
		s.kernelOnce = true
		s.kernel, s.kernelErr = s.readKallsyms()
	}
	for i, a := range addrs {
		f := Frame{Addr: a, Kind: Kernel, Object: "[kernel]", ObjectAddr: a}
		if s.kernelErr == nil {
			if j := s.kernel.lookup(mode.lookupAddr(i, a)); j >= 0 {
				f.Function = s.kernel.name(j)
				f.Offset = a - s.kernel.syms[j].start
				if s.kernel.module != nil && s.kernel.module[j] != 0 {
					f.Object = s.kernel.modules[s.kernel.module[j]]
				}
			}
		}
		frames[i] = f
	}
	return frames, s.kernelErr
}

func (s *Symbolizer) readKallsyms() (table, error) {
	b, err := procfs.ReadFile(filepath.Join(s.opt.Proc, "kallsyms"), maxKallsymsBytes)
	if err != nil {
		return table{}, err
	}
	t, hidden, err := parseKallsyms(b)
	switch {
	case err != nil:
		return table{}, fmt.Errorf("kallsyms: %w", err)
	case hidden:
		return table{}, ErrKernelHidden
	}
	return t, nil
}

// Stats is what a Symbolizer holds.
type Stats struct {
	Objects, ObjectBytes       int // files' function tables
	Processes, Mappings        int // executable mappings kept
	PerfMapEntries             int
	PerfMapBytes               int
	KernelSymbols, KernelBytes int
}

// Bytes is the memory the tables hold, all kinds together.
func (st Stats) Bytes() int { return st.ObjectBytes + st.PerfMapBytes + st.KernelBytes }

// Stats reports what is kept.
func (s *Symbolizer) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Objects: s.objects.lru.Len(), ObjectBytes: s.objects.used, Processes: len(s.procs),
		KernelSymbols: len(s.kernel.syms), KernelBytes: s.kernel.bytes()}
	for _, p := range s.procs {
		st.Mappings += len(p.maps)
		st.PerfMapEntries += len(p.perf.tab.syms)
		st.PerfMapBytes += p.perf.tab.bytes()
	}
	return st
}

// fileKey tells a file from another and from its own older versions: its
// device, inode, size and modification time.
func fileKey(st *unix.Stat_t) string {
	return fmt.Sprintf("s:%d:%d:%d:%d.%d", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
}
