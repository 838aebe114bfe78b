package symbolize

import "strings"

// Plumbing reports whether a frame is runtime or library plumbing rather
// than the thread's own code, so that WHY can name the innermost frame a
// program's authors wrote (db.(*Pool).Get, not runtime.futex;
// WorkQueue::take, not pthread_cond_wait). Plumbing is:
//
//   - every kernel frame;
//   - code in these objects (the file's base name): the C library and its
//     threads, the dynamic loader, the C++ and GCC runtimes and the vDSO —
//     libc.so*, libpthread.so*, librt.so*, libdl.so*, libm.so*,
//     ld-linux*.so*, ld-musl-*, libc.musl-*, libstdc++.so*, libc++.so*,
//     libc++abi.so*, libgcc_s.so*, [vdso] — and the JVM's own libraries:
//     libjvm.so, libjli.so, libjava.so, libnio.so, libnet.so;
//   - Go functions of the runtime and its low-level packages: names
//     starting "runtime.", "runtime/", "internal/", "syscall.", "sync."
//     (Mutex.Lock, WaitGroup.Wait and Cond.Wait, which block on the
//     runtime's behalf, and sync.runtime_* ) and "golang.org/x/sys/unix.",
//     and time.Sleep, which is the runtime's own sleep (runtime.timeSleep
//     under the name of package time), as libc's nanosleep is libc's;
//   - JIT frames of the Java platform (names starting "java.", "jdk.",
//     "sun.", "Ljava/", "Ljdk/", "Lsun/", as JVM perf map writers give
//     them) and the JVM's own stubs ("Interpreter", "StubRoutines",
//     "[vtable stub]").
//
// A frame without a name (stripped code) is not plumbing unless its object
// is: unknown code of the program is still the program's.
func Plumbing(f Frame) bool {
	if f.Kind == Kernel || f.Function == "time.Sleep" {
		return true
	}
	if plumbingObject(f.Object) {
		return true
	}
	n := f.Function
	// Function name prefixes of Go's runtime and of the Java platform.
	for _, p := range [...]string{
		"runtime.", "runtime/", "internal/", "syscall.", "sync.", "golang.org/x/sys/unix.",
		"java.", "jdk.", "sun.", "Ljava/", "Ljdk/", "Lsun/",
	} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return f.Kind == JIT && (n == "Interpreter" || strings.HasPrefix(n, "StubRoutines") || n == "[vtable stub]")
}

func plumbingObject(obj string) bool {
	switch obj {
	case "[vdso]", "libjvm.so", "libjli.so", "libjava.so", "libnio.so", "libnet.so":
		return true
	}
	for _, p := range [...]string{
		"libc.so", "libpthread.so", "librt.so", "libdl.so", "libm.so", "ld-linux",
		"ld-musl-", "libc.musl-", "libstdc++.so", "libc++.so", "libc++abi.so", "libgcc_s.so",
	} {
		if strings.HasPrefix(obj, p) {
			return true
		}
	}
	return false
}

// InnermostOwn returns the index of the innermost frame (the lowest index:
// stacks list the innermost first) that is not Plumbing, or -1 when every
// frame is.
func InnermostOwn(frames []Frame) int {
	for i, f := range frames {
		if !Plumbing(f) {
			return i
		}
	}
	return -1
}

// NoFramePointers tells from a user stack whether the unwinder likely
// stopped early for want of frame pointers, and in which object.
//
// bpf_get_stackid walks the chain of saved frame pointers. In code built
// without them (glibc and most distribution libraries are built with
// -fomit-frame-pointer; Go keeps them on amd64 and arm64) the register
// holds anything, so the walk ends after one or two frames instead of at a
// thread's entry point. The rule is deliberately simple: a stack of one or
// two frames whose outermost frame is not a thread entry point (_start,
// main, start_thread, clone, runtime.goexit, ...) and whose innermost frame
// is in a file is reported, naming the innermost frame's object — the code
// the walk started in, which is the code that did not keep the chain. A
// thread really blocked one or two calls below its entry point is reported
// too; it is a hint, not a verdict.
func NoFramePointers(user []Frame) (object string, ok bool) {
	if len(user) == 0 || len(user) > 2 || user[0].Object == "" || user[0].Kind != User {
		return "", false
	}
	last := user[len(user)-1].Function
	// Where the kernel starts a process or a thread: a walk that reached
	// one of these did not stop early.
	for _, e := range [...]string{
		"_start", "__libc_start_main", "__libc_start_call_main", "main",
		"start_thread", "clone", "clone3", "__clone", "__clone3", "thread_start",
		"runtime.goexit", "runtime.mstart", "runtime.rt0_go", "runtime.main",
	} {
		if last == e {
			return "", false
		}
	}
	return user[0].Object, true
}
