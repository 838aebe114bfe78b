package cli_test

import (
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// version names the host it runs on: a pasted line says what the figures
// were measured on.
func TestVersionNamesHost(t *testing.T) {
	out, err := exec.Command(testutil.Binary(t), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "host: ") || !strings.HasPrefix(lines[2], "tasks: ") {
		t.Fatalf("version = %q, want the version line, a host line and a tasks line", out)
	}
	for _, want := range []string{unix.ByteSliceToString(u.Nodename[:]), unix.ByteSliceToString(u.Release[:]), "GiB", "up "} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("host line %q lacks %q", lines[1], want)
		}
	}
}
