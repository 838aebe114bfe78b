package symbolize

import (
	"testing"
)

// cxxProg has a namespaced template class whose method records a return
// address inside itself (mark's caller is WorkQueue<int>::take).
const cxxProg = `
#include <cstdio>
#include <unistd.h>

extern "C" __attribute__((noinline)) void mark(const char *key) {
	std::printf("%s %p\n", key, __builtin_return_address(0));
}

namespace app {
template <typename T> class WorkQueue {
public:
	__attribute__((noinline)) T take(int fd) {
		mark("take_ret");
		std::printf("ready\n");
		std::fflush(stdout);
		char b = 0;
		return (T)read(fd, &b, 1);
	}
};
} // namespace app

int main() {
	app::WorkQueue<int> q;
	return q.take(0) < 0;
}
`

func TestCxxProgram(t *testing.T) {
	bin := build(t, t.TempDir(), "cxxprog", ".cc", cxxProg, "c++", "-fno-omit-frame-pointer", "-O1", "-g0")
	p := start(t, bin)
	ret := p.addr(t, "take_ret")
	for _, c := range []struct {
		full bool
		want string
	}{
		{false, "app::WorkQueue::take"},
		{true, "app::WorkQueue<int>::take(int)"},
	} {
		s := newSymbolizer(t, Options{FullNames: c.full})
		got := symbolizeUser(t, s, p.pid(), ReturnAddresses, ret)[0]
		if got.Function != c.want || got.Object != "cxxprog" {
			t.Errorf("FullNames %v: %#v, want %q in cxxprog", c.full, got, c.want)
		}
		if Plumbing(got) {
			t.Errorf("%q counted as plumbing", got.Function)
		}
	}
}
