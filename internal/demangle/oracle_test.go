package demangle_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	upstream "github.com/ianlancetaylor/demangle"

	"github.com/ctxtop/ctxtop/internal/demangle"
)

// mangled is every C++ and Rust mangled name in upstream's own test data
// (LLVM's and GCC's demangler cases, Rust's), read from the module
// cache, plus the dynamic symbols of the C++ runtime where it is installed.
func mangled(t *testing.T) []string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ianlancetaylor/demangle").Output()
	if err != nil {
		t.Fatalf("finding upstream's module: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	files, err := filepath.Glob(filepath.Join(dir, "testdata", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test data in %s: %v", dir, err)
	}
	name := regexp.MustCompile(`_[ZR][!-~]*`)
	seen := map[string]bool{}
	var names []string
	add := func(n string) {
		// A name inside a C string of the LLVM cases ends at its quote.
		n, _, _ = strings.Cut(n, `"`)
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			for _, n := range name.FindAllString(sc.Text(), -1) {
				add(n)
			}
		}
	}
	for _, lib := range []string{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib64/libstdc++.so.6"} {
		f, err := elf.Open(lib)
		if err != nil {
			continue
		}
		syms, _ := f.DynamicSymbols()
		for _, s := range syms {
			add(s.Name)
		}
		f.Close()
	}
	return names
}

// TestSameAsUpstream demangles every name with each option set ctxtop and
// upstream's tests use, here and upstream: results and errors must be
// the same.
func TestSameAsUpstream(t *testing.T) {
	names := mangled(t)
	if len(names) < 10000 {
		t.Fatalf("only %d names found", len(names))
	}
	sets := []struct {
		ours   []demangle.Option
		theirs []upstream.Option
	}{
		{nil, nil},
		{[]demangle.Option{demangle.MaxLength(12)}, []upstream.Option{upstream.MaxLength(12)}},
		{[]demangle.Option{demangle.MaxLength(12), demangle.NoParams, demangle.NoTemplateParams, demangle.NoEnclosingParams},
			[]upstream.Option{upstream.MaxLength(12), upstream.NoParams, upstream.NoTemplateParams, upstream.NoEnclosingParams}},
		{[]demangle.Option{demangle.LLVMStyle}, []upstream.Option{upstream.LLVMStyle}},
		{[]demangle.Option{demangle.NoRust, demangle.Verbose}, []upstream.Option{upstream.NoRust, upstream.Verbose}},
	}
	compared, differ := 0, 0
	for _, n := range names {
		for i, set := range sets {
			got, gotErr := demangle.ToString(n, set.ours...)
			want, wantErr := upstream.ToString(n, set.theirs...)
			compared++
			if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				differ++
				if differ <= 10 {
					t.Errorf("%q, option set %d: %q, %v; upstream %q, %v", n, i, got, gotErr, want, wantErr)
				}
			}
			if got, want := demangle.Filter(n, set.ours...), upstream.Filter(n, set.theirs...); got != want {
				differ++
				if differ <= 10 {
					t.Errorf("Filter(%q), option set %d: %q; upstream %q", n, i, got, want)
				}
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d results differ", differ, compared)
	}
	t.Logf("%d names, %d results compared", len(names), compared)
}

// TestNoGoString: the point of the copy. A node printed with %#v falls
// back to fmt's own rendering rather than a method that costs the binary.
func TestNoGoString(t *testing.T) {
	a, err := demangle.ToAST("_ZN3foo3barEv")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.(interface{ GoString() string }); ok {
		t.Errorf("%T has a GoString method again", a)
	}
}
