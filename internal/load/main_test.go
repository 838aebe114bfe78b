package load

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// TestMain lets the test binary play the child of process mode, which
// re-executes os.Executable() with ChildCommand.
func TestMain(m *testing.M) {
	if len(os.Args) >= 4 && os.Args[1] == ChildCommand && os.Args[2] == "--cpu" {
		cpu, err := strconv.Atoi(os.Args[3])
		if err == nil {
			err = RunChild(cpu)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
