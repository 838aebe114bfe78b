package cli_test

import (
	"os"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

func TestMain(m *testing.M) { os.Exit(testutil.RunWithOwnConfig(m)) }
