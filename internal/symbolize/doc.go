// Package symbolize names the addresses of user and kernel stacks, as
// bpf_get_stackid captures them, for the off-CPU and wake-up stacks WHY
// shows.
//
//	s, err := symbolize.New(symbolize.Options{Proc: "/proc"})
//	frames, err := s.User(pid, userAddrs, symbolize.StackAddresses)
//	kframes, err := s.Kernel(kernelAddrs, symbolize.StackAddresses)
//	own := symbolize.InnermostOwn(frames) // the thread's own code, not libc or runtime.*
//	if obj, ok := symbolize.NoFramePointers(frames); ok { /* "obj lacks frame pointers?" */ }
//	rt, err := s.GoProcess(pid) // a Go program's runtime layout, for following parked goroutines
//	s.Forget(pid)   // the process exited
//	st := s.Stats() // tables kept and their bytes
//
// # Addresses
//
// A captured stack lists the innermost frame first: the instruction
// pointer, then return addresses. A return address points after the call,
// which for a call to a noreturn function is already the next function, so
// every frame but the first is looked up at address-1 (StackAddresses).
// ReturnAddresses looks up every frame so (runtime.Callers, backtrace(3));
// ExactAddresses none. Frame.Addr and Frame.Offset keep the address given.
//
// # User addresses
//
// /proc/PID/maps says which file an address is mapped from and at which
// file offset; the file's PT_LOAD segments turn that offset into the ELF
// virtual address nm and addr2line use, whatever the load bias (PIE,
// shared library, non-PIE executable). The file is opened through
// /proc/PID/map_files (the very file mapped, in any mount namespace), else
// inside /proc/PID/root through openat2 RESOLVE_IN_ROOT (Linux 5.6), so a
// container's symlink never leads to a host file, and only if its inode is
// the one maps names. Functions come from the ELF .symtab, then .dynsym
// plus, for a stripped file, the .symtab of its separate debug file (by
// build id or .gnu_debuglink, inside the process's root then under
// Options.DebugRoot), its MiniDebugInfo, or a debuginfod server
// (Options.Debuginfod, fetched in the background: see debugfile.go), and for
// Go binaries from the runtime's pclntab through debug/gosym, which names
// Go functions even in binaries linked with -s -w. C++ and Rust names are
// demangled (github.com/ianlancetaylor/demangle) to a short form,
// "app::WorkQueue::take", or with Options.FullNames in full. Addresses in
// memory no file backs are looked up in the process's perf map,
// /proc/PID/root/tmp/perf-NSPID.map, where JITs name their code. A frame
// nothing names shows as its object and ELF address, "libfoo.so+0x1234",
// with the object's build id in Frame.BuildID for offline symbolization;
// a name is never guessed.
//
// # Kernel addresses
//
// Kernel frames are named from /proc/kallsyms, read once. A reader the
// kernel does not trust (kernel.kptr_restrict, no CAP_SYSLOG) reads zeros
// there; Kernel then returns ErrKernelHidden and unnamed frames.
//
// # Caching and bounds
//
// Function tables are kept per file, keyed by (device, inode, size,
// mtime) and by build id (the same library in two containers is read
// once), least recently used out beyond Options.CacheBytes. A process's
// executable mappings are kept and re-read when older than
// Options.MapsMaxAge, or sooner when an address falls outside all of them
// (a dlopen, a new JIT region); unchanged mappings keep their files. Every
// input is untrusted and bounded: maps 64 MiB, a symbol table 16 MiB, a
// pclntab 64 MiB, a perf map 64 MiB and 1,048,576 entries, kallsyms
// 128 MiB, a name 1,024 bytes, a demangled name 4,096; a malformed ELF
// file is an error, not a panic. Names are sanitized for the terminal.
//
// Limits: inlined calls are not expanded (a frame names the function the
// code was compiled into), DWARF is not read (no file:line), a stripped
// externally linked Go binary whose linker dropped the .gopclntab section
// name is not named, and kernel modules loaded after the first Kernel call
// are not named.
package symbolize
