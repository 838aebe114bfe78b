package sampler

import (
	"os/exec"
	"slices"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
)

// TestListingOnlyWhenTasksWereMade: the /proc path lists the root
// directory again only when the kernel has handed out a PID since the
// last listing (loadavg's last field), and a process started between
// two passes is in the second all the same, one that exited gone.
func TestListingOnlyWhenTasksWereMade(t *testing.T) {
	s, err := New(Config{Root: "/proc", NoTaskIter: true, NoTaskstats: true, NoCgroups: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.pidGate {
		t.Skip("/proc is not this process's own")
	}
	var smp model.Sample
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	// Back to back, many passes find no new PID, even on a busy host.
	quiet, listedQuiet := 0, 0
	for range 50 {
		before, listings := s.listedPID, s.listings
		if err := s.Sample(&smp); err != nil {
			t.Fatal(err)
		}
		if s.lastPID == before {
			quiet++
			if s.listings != listings {
				listedQuiet++
			}
		} else if s.listings == listings {
			t.Errorf("last PID %d -> %d, and /proc was not listed", before, s.lastPID)
		}
	}
	t.Logf("%d of 50 passes found no new PID; %d listings in all", quiet, s.listings)
	if quiet == 0 {
		t.Skip("every pass found a new PID: this host starts tasks faster than the passes run")
	}
	if listedQuiet > 0 {
		t.Errorf("%d of the %d passes that found no new PID listed /proc all the same", listedQuiet, quiet)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	has := func(pid int) bool {
		return slices.ContainsFunc(smp.Tasks, func(c model.TaskCounters) bool { return c.PID == pid })
	}
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	if !has(child.Process.Pid) {
		t.Errorf("a process started before the pass is not in it")
	}
	child.Process.Kill()
	child.Wait()
	if err := s.Sample(&smp); err != nil {
		t.Fatal(err)
	}
	if has(child.Process.Pid) {
		t.Errorf("a process that exited before the pass is in it")
	}
}
