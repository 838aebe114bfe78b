package buildsize

import (
	"cmp"
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxBytes is the budget for bin/ctxtop, issue 19's 15 MB, a guard against
// regressions such as a text/template brought back (3 MB). It was
// 26,755,234 bytes with gonum/plot and exporter-toolkit, 16,187,554 without
// them, 17,399,970 once the off-CPU stacks came with their C++ demangler
// (0.9 MB) and the BPF task walk, and 14,848,162 once ctxtop serve wrote
// its exposition without client_golang (2.25 MB) and the man pages came
// from a build-time tool (0.28 MB). See the README's build section for what
// the megabytes buy.
const maxBytes = 15_000_000

var shares = flag.Bool("shares", false, "log the binary's size by module even when within budget")

// repoRoot is two levels up: go test runs in the package's directory.
const repoRoot = "../.."

func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no go command to build with")
	}
	return p
}

// build runs go build as make build does (static, no paths, stripped unless
// strip is false) and returns the binary's path.
func build(t *testing.T, goCmd string, strip bool) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "ctxtop")
	args := []string{"build", "-trimpath", "-o", out}
	if strip {
		// The Makefile also sets version strings with -X: a few bytes.
		args = append(args, "-ldflags", "-s -w")
	}
	cmd := exec.Command(goCmd, append(args, "./cmd/ctxtop")...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// TestBinarySize fails when the stripped static binary exceeds maxBytes,
// and then logs which modules take the room.
func TestBinarySize(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goCmd := goTool(t)
	fi, err := os.Stat(build(t, goCmd, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bin/ctxtop: %d bytes (%.2f MiB), budget %d", fi.Size(), float64(fi.Size())/(1<<20), maxBytes)
	over := fi.Size() > maxBytes
	if over {
		t.Errorf("bin/ctxtop is %d bytes, over the budget of %d by %d", fi.Size(), maxBytes, fi.Size()-maxBytes)
	}
	if over || *shares {
		t.Logf("symbol bytes by module, unstripped build (pclntab, about as much again as the code, not counted):\n%s", moduleShares(t, goCmd, build(t, goCmd, false)))
	}
}

// moduleShares sums the ELF symbol sizes by the module (from the binary's
// build info) or standard package that defines them. Symbols in .bss and
// .noptrbss take no room in the file and are left out (go tool nm would
// list the FIPS DRBG's 33 MB buffer).
func moduleShares(t *testing.T, goCmd, bin string) string {
	t.Helper()
	info, err := exec.Command(goCmd, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var mods []string
	for _, line := range strings.Split(string(info), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "dep" {
			mods = append(mods, f[1])
		}
	}
	// Longest first, so a nested module wins over its parent.
	slices.SortFunc(mods, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	sum := map[string]uint64{}
	var total uint64
	for _, s := range syms {
		if int(s.Section) >= len(f.Sections) || f.Sections[s.Section].Type != elf.SHT_PROGBITS {
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(s.Name, "type:"), "*")
		key := ""
		for _, m := range mods {
			if strings.HasPrefix(name, m+".") || strings.HasPrefix(name, m+"/") {
				key = m
				break
			}
		}
		switch {
		case key != "":
		case strings.HasPrefix(name, "github.com/ctxtop/"):
			key = "ctxtop"
		case strings.HasPrefix(name, "go:func."):
			key = "(function metadata)"
		default:
			key = "std " + strings.SplitN(strings.SplitN(name, ".", 2)[0], "/", 2)[0]
		}
		sum[key] += s.Size
		total += s.Size
	}
	keys := make([]string, 0, len(sum))
	for k := range sum {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(sum[b], sum[a]), strings.Compare(a, b)) })
	var b strings.Builder
	for i, k := range keys {
		if i == 20 {
			break
		}
		fmt.Fprintf(&b, "%10d  %s\n", sum[k], k)
	}
	fmt.Fprintf(&b, "%10d  total", total)
	return b.String()
}
