package cli_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestRefreshWakesFewThreads: a refresh costs the monitor itself a few
// voluntary switches, not the 50 of the Go runtime's sysmon thread polling
// every 20 µs through each pass. The task walk's run (BPF_PROG_TEST_RUN),
// made through the scheduler, woke sysmon from its long sleep at each
// refresh: 55 voluntary switches a second at one refresh a second, against
// 13 with the walk's raw call (batch mode, the host to itself, root).
// Voluntary switches only: a busy host preempts the monitor's threads
// without their doing anything.
func TestRefreshWakesFewThreads(t *testing.T) {
	cmd := exec.Command(testutil.Binary(t), "-b", "-d", "1", "-n", "30")
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	time.Sleep(3 * time.Second) // past the start and its first reports
	before := voluntarySwitches(t, cmd.Process.Pid)
	const refreshes = 10
	time.Sleep(refreshes * time.Second)
	per := float64(voluntarySwitches(t, cmd.Process.Pid)-before) / refreshes
	t.Logf("%.1f voluntary switches of the monitor's threads a refresh", per)
	if per > 20 {
		t.Errorf("the monitor's threads switched %.1f times a refresh, want at most 20", per)
	}
}

// voluntarySwitches sums voluntary_ctxt_switches over pid's threads.
func voluntarySwitches(t *testing.T, pid int) int {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile(dir + e.Name() + "/status")
		if err != nil {
			continue // a thread that exited
		}
		_, v, ok := bytes.Cut(b, []byte("\nvoluntary_ctxt_switches:"))
		if !ok {
			t.Fatalf("no voluntary_ctxt_switches in %s/status", e.Name())
		}
		v, _, _ = bytes.Cut(v, []byte("\n"))
		k, err := strconv.Atoi(string(bytes.TrimSpace(v)))
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	return n
}
