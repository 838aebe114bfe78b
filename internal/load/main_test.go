package load

import (
	"os"
	"testing"
)

// TestMain lets the test binary play the workload process and process
// mode's partner, which Start re-executes os.Executable() as.
func TestMain(m *testing.M) {
	RunAsChildIfAsked()
	os.Exit(m.Run())
}
