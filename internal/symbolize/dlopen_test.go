package symbolize

import (
	"path/filepath"
	"testing"
	"time"
)

const plugLib = `
__attribute__((noinline)) int plug_fn(int x) { return x * 3 + 1; }
`

// dlopenProg loads a library only when told to, after the symbolizer has
// read its mappings.
const dlopenProg = `
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
	printf("main %p\nready\n", (void *)main);
	fflush(stdout);
	char b;
	if (read(0, &b, 1) != 1)
		return 0;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h)
		return 1;
	printf("plug_fn %p\nready\n", dlsym(h, "plug_fn"));
	fflush(stdout);
	while (read(0, &b, 1) == 1)
		;
	return 0;
}
`

// TestMapsRefresh: an address in a library mapped after the mappings were
// read is a miss that re-reads them, even while they are not yet stale.
func TestMapsRefresh(t *testing.T) {
	dir := t.TempDir()
	lib := build(t, dir, "libplug.so", ".c", plugLib, "cc", "-shared", "-fPIC", "-O1", "-fno-omit-frame-pointer")
	bin := build(t, dir, "dlopen", ".c", dlopenProg, cFlags...)
	p := start(t, bin, lib)
	s := newSymbolizer(t, Options{MapsMaxAge: time.Hour, MinRefresh: time.Nanosecond})
	if f := symbolizeUser(t, s, p.pid(), ExactAddresses, p.addr(t, "main"))[0]; f.Function != "main" {
		t.Fatalf("main = %#v", f)
	}
	if _, err := p.stdin.Write([]byte{'x'}); err != nil {
		t.Fatal(err)
	}
	p.readUntil(t, "ready")
	f := symbolizeUser(t, s, p.pid(), ExactAddresses, p.addr(t, "plug_fn")+2)[0]
	if f.Function != "plug_fn" || f.Offset != 2 || f.Object != filepath.Base(lib) || f.BuildID != buildID(t, lib) {
		t.Errorf("plug_fn+2 after dlopen = %#v, want plug_fn+2 in %s", f, filepath.Base(lib))
	}
}
