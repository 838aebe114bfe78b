// Package testutil holds helpers shared by end-to-end tests.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	builtPath string
	buildErr  error
	buildOut  []byte
)

// Binary returns the path of a ctxtop binary to run end to end: $CTXTOP_BIN
// when the Makefile built one, otherwise one built once per test process.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("CTXTOP_BIN"); p != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ctxtop-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		builtPath = filepath.Join(dir, "ctxtop")
		cmd := exec.Command("go", "build", "-o", builtPath, "./cmd/ctxtop")
		cmd.Dir = repoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building ctxtop: %v\n%s", buildErr, buildOut)
	}
	return builtPath
}

// RepoRoot is the repository's top directory, for fixtures under testdata/.
func RepoRoot() string { return repoRoot() }

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

var (
	toolMu    sync.Mutex
	toolPaths = map[string]string{}
)

// Tool builds the main package at pkg (relative to the repository root, like
// "./internal/testutil/pingpong") once per test process and returns its path.
func Tool(t testing.TB, pkg string) string {
	t.Helper()
	toolMu.Lock()
	defer toolMu.Unlock()
	if p, ok := toolPaths[pkg]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "ctxtop-tool-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = repoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, b)
	}
	toolPaths[pkg] = out
	return out
}
