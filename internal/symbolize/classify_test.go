package symbolize

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInnermostOwn(t *testing.T) {
	for _, c := range []struct {
		name   string
		frames []Frame
		want   int
	}{
		{"go", []Frame{
			{Function: "runtime.futex", Object: "app"},
			{Function: "runtime.lock2", Object: "app"},
			{Function: "sync.runtime_SemacquireMutex", Object: "app"},
			{Function: "sync.(*Mutex).lockSlow", Object: "app"},
			{Function: "internal/sync.(*Mutex).Lock", Object: "app"},
			{Function: "db.(*Pool).Get", Object: "app"},
			{Function: "main.main", Object: "app"},
		}, 5},
		{"a Go sleep is its caller's", []Frame{
			{Function: "runtime.gopark", Object: "app"},
			{Function: "time.Sleep", Object: "app"},
			{Function: "main.worker", Object: "app"},
		}, 2},
		{"c++ on glibc", []Frame{
			{Kind: Kernel, Function: "futex_wait", Object: "[kernel]"},
			{Function: "__futex_abstimed_wait_common", Object: "libc.so.6"},
			{Function: "pthread_cond_wait", Object: "libc.so.6"},
			{Function: "std::condition_variable::wait", Object: "libstdc++.so.6"},
			{Function: "app::WorkQueue::take", Object: "server"},
		}, 4},
		{"stripped program code is still the program's", []Frame{
			{Function: "read", Object: "libc.so.6"},
			{Object: "server", ObjectAddr: 0x1234},
		}, 1},
		{"java", []Frame{
			{Function: "Unsafe_Park", Object: "libjvm.so"},
			{Kind: JIT, Function: "Interpreter", Object: "perf-1.map"},
			{Kind: JIT, Function: "Ljava/util/concurrent/locks/LockSupport;::park", Object: "perf-1.map"},
			{Kind: JIT, Function: "Lcom/example/Pool;::get", Object: "perf-1.map"},
		}, 3},
		{"java, as Compiler.perfmap names it", []Frame{
			{Function: "Unsafe_Park", Object: "libjvm.so"},
			{Kind: JIT, Function: displayName("void jdk.internal.misc.Unsafe.park(boolean, long)", false), Object: "perf-1.map"},
			{Kind: JIT, Function: displayName("void java.util.concurrent.locks.LockSupport.park(java.lang.Object)", false), Object: "perf-1.map"},
			{Kind: JIT, Function: displayName("void PingPong$Player.run()", false), Object: "perf-1.map"},
		}, 3},
		{"musl", []Frame{{Function: "__syscall_cp_asm", Object: "ld-musl-x86_64.so.1"}}, -1},
		{"vdso", []Frame{{Object: "[vdso]"}, {Function: "clock_gettime", Object: "libc.so.6"}}, -1},
	} {
		if got := InnermostOwn(c.frames); got != c.want {
			t.Errorf("%s: InnermostOwn = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestNoFramePointers(t *testing.T) {
	type result struct {
		Object string
		OK     bool
	}
	for _, c := range []struct {
		name  string
		stack []Frame
		want  result
	}{
		{"one frame in libc", []Frame{{Function: "__futex_abstimed_wait_common", Object: "libc.so.6"}}, result{"libc.so.6", true}},
		{"two frames, no entry point", []Frame{{Function: "read", Object: "libc.so.6"}, {Object: "server", ObjectAddr: 0x99}}, result{"libc.so.6", true}},
		{"reaches start_thread", []Frame{{Function: "read", Object: "libc.so.6"}, {Function: "start_thread", Object: "libc.so.6"}}, result{}},
		{"reaches main", []Frame{{Function: "main", Object: "server"}}, result{}},
		{"deep stack", []Frame{{Object: "libc.so.6"}, {Object: "server"}, {Object: "server"}}, result{}},
		{"unmapped innermost", []Frame{{Addr: 0x10}}, result{}},
		{"jit innermost", []Frame{{Kind: JIT, Function: "x", Object: "perf-1.map"}}, result{}},
		{"empty", nil, result{}},
	} {
		obj, ok := NoFramePointers(c.stack)
		if diff := cmp.Diff(c.want, result{obj, ok}); diff != "" {
			t.Errorf("%s: NoFramePointers (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestFrameString(t *testing.T) {
	for _, c := range []struct {
		f    Frame
		want string
	}{
		{Frame{Function: "consumer_wait", Object: "cprog", Offset: 4}, "consumer_wait"},
		{Frame{Object: "libfoo.so", ObjectAddr: 0x1234}, "libfoo.so+0x1234"},
		{Frame{Addr: 0xdead}, "0xdead"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.f, got, c.want)
		}
	}
}
