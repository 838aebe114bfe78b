package testutil

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// HostileNames are thread names any user can set with prctl(PR_SET_NAME)
// (at most 15 bytes each), and HostileNamesClean what ctxtop must show for
// them: sanitize.Name's '?' per control or format character, U+FFFD per
// byte that is not UTF-8.
var (
	HostileNames = []string{
		"\x1b[2J\x1b[Hpwn", // clear the screen, cursor home
		"x\x1b[31mRED",     // colour that would leak over the rest of the row
		"a\rb\tc\nd",       // carriage return, tab, newline: a split row
		"\x1b]0;owned\x07", // OSC 0: set the window title
		"bad\xff\xfeutf8",  // not UTF-8
		"\u202eevil",       // right-to-left override
		"\u009b2Jc1",       // C1 CSI, the 8-bit form of ESC [
		"数据库线程",            // CJK: two cells per character
	}
	HostileNamesClean = []string{
		"?[2J?[Hpwn",
		"x?[31mRED",
		"a?b?c?d",
		"?]0;owned?",
		"bad\ufffd\ufffdutf8",
		"?evil",
		"?2Jc1",
		"数据库线程",
	}
	// HostileProcessName is the main thread's name: the process name.
	HostileProcessName      = "\x1b[41mPROC"
	HostileProcessNameClean = "?[41mPROC"
)

// StartHostileNames runs the hostilenames workload for the rest of the test
// and returns its PID and the TIDs of its named threads, in the order of
// HostileNames.
func StartHostileNames(t testing.TB) (pid int, tids []int) {
	t.Helper()
	cmd := exec.Command(Tool(t, "./internal/testutil/hostilenames"))
	_, out := StartWorkload(t, cmd)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("hostilenames workload: %v", err)
	}
	f := strings.Fields(line)
	if len(f) != 1+len(HostileNames) {
		t.Fatalf("hostilenames workload said %q", line)
	}
	ids := make([]int, len(f))
	for i, s := range f {
		if ids[i], err = strconv.Atoi(s); err != nil {
			t.Fatalf("hostilenames workload said %q: %v", line, err)
		}
	}
	return ids[0], ids[1:]
}
