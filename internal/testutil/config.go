package testutil

import (
	"fmt"
	"os"
	"testing"
)

// RunWithOwnConfig runs a package's tests with XDG_CONFIG_HOME set to a
// fresh directory, removed afterwards. The live monitor keeps the view
// it ended with (processes, a sort, a filter) and starts in it next time;
// without this, one test that pressed H, or a person who did, would start
// every later test's monitor in another view. A test that checks the
// settings themselves sets its own directory.
func RunWithOwnConfig(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ctxtop-test-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Setenv("XDG_CONFIG_HOME", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
