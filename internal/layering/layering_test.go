// Package layering holds the import rules between ctxtop's packages: views
// read no data source, the file format runs no processing stage, sinks reach
// the data through the model and the pipeline. A rule broken today by a
// seam under repair is an explicit exception below, with its reason, so
// that only a new violation fails.
package layering

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

const module = "github.com/ctxtop/ctxtop/"

// Data sources read the kernel: /proc, BPF programs, symbol tables.
var sources = []string{
	"internal/procfs", "internal/sampler", "internal/taskiter", "internal/waketrace",
	"internal/stacks", "internal/symbolize", "internal/bpfutil", "internal/load",
}

// Sinks turn Snapshots into what users see; the CLI composes everything.
var sinks = []string{"internal/tui", "internal/output", "internal/exporter", "internal/report", "internal/cli"}

type rule struct {
	// from is a package, and every package under it.
	from string
	// forbid lists packages (and those under them) from may not import.
	forbid []string
	// transitive applies forbid to every package from depends on, not
	// only its own imports.
	transitive bool
	why        string
}

var rules = []rule{
	{"internal/tui", append(append([]string{"internal/record", "internal/pipeline"}, sources...), sinks[1:]...), true,
		"a view draws what it is given: it reads no data source and no file, and runs no stage"},
	{"internal/record", append(append([]string{"internal/pipeline"}, sources...), sinks...), false,
		"a file format keeps raw samples: it runs no processing stage beyond the model"},
	{"internal/output", append(append([]string{"internal/record", "internal/pipeline"}, sources...), sinks[:1]...), true,
		"batch output formats the model's Snapshots; it reads nothing itself"},
	{"internal/exporter", append(append([]string{"internal/record"}, sources...), sinks[:2]...), false,
		"the exporter reaches the data through the model and the pipeline"},
	{"internal/model", append(append([]string{"internal/record", "internal/pipeline", "internal/fields", "internal/format"}, sources...), sinks...), true,
		"the model is pure: the same two Samples give the same Snapshot"},
	{"internal/format", append(append([]string{"internal/record", "internal/pipeline"}, sources...), sinks...), true,
		"formatting depends on nothing but the model's types"},
	{"internal/fields", append(append([]string{"internal/record", "internal/pipeline"}, sources...), sinks...), true,
		"the field table depends on nothing but the model's types"},
}

// exceptions are imports that break a rule today, each allowed by name
// (importer and imported) with the reason and the work that removes it. A
// transitive rule does not follow an excepted import.
var exceptions = map[[2]string]string{}

type pkg struct {
	ImportPath string
	Imports    []string
}

// imports is every package of the module by path relative to it ("internal/tui"),
// with its own (not its tests') imports of the module's packages.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = testutil.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	m := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		m[from] = []string{}
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				m[from] = append(m[from], rel)
			}
		}
	}
	if len(m) < 20 {
		t.Fatalf("go list found %d packages of the module, want the whole tree", len(m))
	}
	return m
}

func under(p, root string) bool { return p == root || strings.HasPrefix(p, root+"/") }

// helper says whether p is a test-support package (tuitest, recordtest):
// tests may reach anything.
func helper(p string) bool {
	return strings.HasSuffix(p, "test") || strings.Contains(p, "/testutil") || strings.HasPrefix(p, "internal/testutil")
}

// violations lists, for each rule, the chains by which a package under its
// from reaches a forbidden one ("internal/tui -> internal/procctl ->
// internal/load").
func violations(deps map[string][]string) []string {
	var bad []string
	for _, r := range rules {
		for from := range deps {
			if !under(from, r.from) || helper(from) {
				continue
			}
			// A walk from each package: breadth first, remembering how
			// each package was reached, so a violation names its chain.
			via := map[string]string{from: ""}
			queue := []string{from}
			for len(queue) > 0 {
				p := queue[0]
				queue = queue[1:]
				for _, imp := range deps[p] {
					if _, seen := via[imp]; seen || helper(imp) {
						continue
					}
					if _, ok := exceptions[[2]string{p, imp}]; ok {
						continue
					}
					via[imp] = p
					if slices.ContainsFunc(r.forbid, func(f string) bool { return under(imp, f) && !under(imp, r.from) }) {
						chain := imp
						for q := p; q != ""; q = via[q] {
							chain = q + " -> " + chain
						}
						bad = append(bad, chain+": "+r.why)
						continue
					}
					if r.transitive {
						queue = append(queue, imp)
					}
				}
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

func TestLayering(t *testing.T) {
	deps := imports(t)
	for _, v := range violations(deps) {
		t.Errorf("forbidden import: %s", v)
	}
	// An exception whose import is gone is stale: drop it, so the rule
	// holds again in full.
	for e, why := range exceptions {
		if !slices.Contains(deps[e[0]], e[1]) {
			t.Errorf("exception %s -> %s no longer needed (%s): remove it", e[0], e[1], why)
		}
	}
}

// TestLayeringCatchesNewImports checks the rules against imports added to
// the real graph: a view reading /proc, directly or through a package it
// imports, and the model depending on a sink.
func TestLayeringCatchesNewImports(t *testing.T) {
	real := imports(t)
	for _, add := range [][2]string{
		{"internal/tui/table", "internal/sampler"},
		{"internal/tui/header", "internal/hostinfo"}, // allowed: control case
		{"internal/tui/theme", "internal/pipeline"},
		{"internal/output", "internal/record"},
		{"internal/record", "internal/stacks"},
		{"internal/record", "internal/pipeline"}, // the player lives in pipeline, above the format
		{"internal/model", "internal/format"},
		{"internal/hostinfo", "internal/procfs"}, // tui imports hostinfo: caught transitively
	} {
		deps := map[string][]string{}
		for p, imps := range real {
			deps[p] = slices.Clone(imps)
		}
		before := len(violations(deps))
		deps[add[0]] = append(deps[add[0]], add[1])
		got := len(violations(deps)) > before
		want := add != [2]string{"internal/tui/header", "internal/hostinfo"}
		if got != want {
			t.Errorf("adding %s -> %s: caught %v, want %v", add[0], add[1], got, want)
		}
	}
}
