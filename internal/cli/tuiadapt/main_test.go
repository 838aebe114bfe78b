package tuiadapt

import (
	"flag"
	"os"
	"testing"

	"github.com/ctxtop/ctxtop/internal/load"
)

// TestMain lets the test binary play the workload process the loader
// re-executes this binary as.
func TestMain(m *testing.M) {
	load.RunAsChildIfAsked()
	flag.Parse()
	os.Exit(m.Run())
}
