package cli_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// replay -o folded of a recording made without --stacks says why it has
// nothing to print, in one line, and exits non-zero: the user asked for
// stacks that are not there. One made with them prints them.
func TestReplayFoldedWithoutStacks(t *testing.T) {
	bin := testutil.Binary(t)
	dir := t.TempDir()
	plain, traced := filepath.Join(dir, "plain.ctxrec"), filepath.Join(dir, "stacks.ctxrec")
	if err := tuitest.TracedReplayFile(plain, 10, true, false); err != nil {
		t.Fatal(err)
	}
	if err := tuitest.TracedReplayFile(traced, 10, false, true); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "replay", "-b", "-o", "folded", plain).Output()
	stderr := exitStderr(err)
	if err == nil || len(out) > 0 {
		t.Errorf("replay -o folded without stacks: err %v, stdout %q", err, out)
	}
	if want := "no stacks in this recording for -o folded (record with --stacks)"; !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q, want one line saying %q", stderr, want)
	}
	out, err = exec.Command(bin, "replay", "-b", "-o", "folded", traced).Output()
	if err != nil || len(out) == 0 {
		t.Errorf("replay -o folded with stacks: err %v %s, %d bytes", err, exitStderr(err), len(out))
	}
}
