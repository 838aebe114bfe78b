package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/load"
)

// TestLoadFlagsNameTheModesThatTakeThem: an option given to a mode that
// does not take it is refused with the modes that do, read from the
// registry (--work is pool's alone, not poll's too).
func TestLoadFlagsNameTheModesThatTakeThem(t *testing.T) {
	for _, c := range []struct {
		args string
		want string
	}{
		{"--mode futex --work 1ms", "--work applies to pool mode, not futex"},
		{"--mode poll --work 1ms", "--work applies to pool mode, not poll"},
		{"--mode pool --period 1ms", "--period applies to poll mode, not pool"},
		{"--mode pipe --threads 2", "--threads applies to pool and poll modes, not pipe"},
		{"--mode poll --cpu-quota 1", "--cpu-quota applies to pool mode, not poll"},
		{"--mode syscall --working-set 1M", "--working-set applies to futex, pipe and process modes, not syscall"},
		{"--mode syscall --cpus 0,1", "--cpus: syscall mode runs one thread, so it takes one CPU (--cpus 0), not two"},
	} {
		cmd := newLoadCmd()
		cmd.SetArgs(strings.Fields(c.args))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if err == nil || err.Error() != c.want {
			t.Errorf("ctxtop load %s: error %v, want %q", c.args, err, c.want)
		}
	}
}

// TestLoadHelpListsEveryMode: --help and --mode's usage come from the
// registry, so a new mode is described where it is registered.
func TestLoadHelpListsEveryMode(t *testing.T) {
	cmd := newLoadCmd()
	for _, i := range load.Modes() {
		if !strings.Contains(cmd.Long, "\n  "+string(i.Mode)+" ") {
			t.Errorf("load --help lacks %s", i.Mode)
		}
		if !strings.Contains(cmd.Flag("mode").Usage, string(i.Mode)) {
			t.Errorf("--mode's usage %q lacks %s", cmd.Flag("mode").Usage, i.Mode)
		}
	}
	for _, l := range strings.Split(cmd.Long, "\n") {
		if len([]rune(l)) > 80 && !strings.Contains(l, "http") {
			t.Errorf("help line of %d columns: %q", len([]rune(l)), l)
		}
	}
}
