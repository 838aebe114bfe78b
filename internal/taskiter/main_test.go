package taskiter

import (
	"os"
	"testing"

	"github.com/ctxtop/ctxtop/internal/load"
)

// TestMain lets the test binary play the workload process the hooks'
// overhead benchmark starts, which load.Start re-executes
// os.Executable() as.
func TestMain(m *testing.M) {
	load.RunAsChildIfAsked()
	os.Exit(m.Run())
}
