package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// H twice shows cgroups; Enter on one lists its threads, H its processes,
// Esc the cgroup list again.
func TestCgroupRowsOpenTheirThreads(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{snaps: []model.Snapshot{tuitest.WithCgroups()}}, 120, 40))
	m, _ = step(t, m, press("H"))
	m, _ = step(t, m, press("H"))
	screen := ansi.Strip(m.Render())
	if !m.table.Cgroups() || !strings.Contains(screen, "cgroups") || !strings.Contains(screen, "pingpong.service") {
		t.Fatalf("H twice should list cgroups:\n%s", screen)
	}
	m, _ = step(t, m, press("down"))
	if r, _ := m.table.Selected(); r.Cgroup != tuitest.PodCgroup {
		t.Fatalf("second row is %q, want the pod", r.Cgroup)
	}
	m, _ = step(t, m, press("enter"))
	rows := m.table.Rows()
	if m.table.Cgroups() || len(rows) != 3 || rows[0].PID != 901 {
		t.Errorf("Enter on the pod: cgroups=%v, %d rows, want its 3 threads", m.table.Cgroups(), len(rows))
	}
	if screen := ansi.Strip(m.Render()); !strings.Contains(screen, "in pod 1d2e3f4a") {
		t.Errorf("header does not say which cgroup:\n%s", screen)
	}
	m, _ = step(t, m, press("H"))
	if rows := m.table.Rows(); len(rows) != 1 || rows[0].PID != 901 {
		t.Errorf("processes of the pod: %d rows, want java alone", len(rows))
	}
	m, _ = step(t, m, press("esc"))
	if m.table.CgroupFilter() != "" || !m.table.Cgroups() || len(m.table.Rows()) != 3 {
		t.Errorf("Esc should list the cgroups again: filter %q, cgroups %v, %d rows", m.table.CgroupFilter(), m.table.Cgroups(), len(m.table.Rows()))
	}
}

// Esc from a cgroup's threads goes back where Enter came from: the cgroup
// list, on that cgroup's row. A filter typed in the list goes first.
func TestEscFromCgroupThreadsReturnsToCgroups(t *testing.T) {
	m := sampled(t, newRoot(t, &fakeSource{snaps: []model.Snapshot{tuitest.WithCgroups()}}, 120, 40))
	m, _ = step(t, m, press("H"))
	m, _ = step(t, m, press("H"))
	m, _ = step(t, m, press("down"))
	m, _ = step(t, m, press("enter"))
	if m.table.Cgroups() || m.table.CgroupFilter() != tuitest.PodCgroup {
		t.Fatalf("Enter on the pod should list its threads: cgroups %v, filter %q", m.table.Cgroups(), m.table.CgroupFilter())
	}
	m, _ = step(t, m, press("/"))
	m, _ = step(t, m, press("9"))
	m, _ = step(t, m, press("enter"))
	m, _ = step(t, m, press("esc"))
	if m.table.Filter() != "" || m.table.Cgroups() || m.table.CgroupFilter() != tuitest.PodCgroup {
		t.Errorf("first Esc should clear the typed filter only: filter %q, cgroups %v, cgroup %q", m.table.Filter(), m.table.Cgroups(), m.table.CgroupFilter())
	}
	m, _ = step(t, m, press("esc"))
	if !m.table.Cgroups() || m.table.CgroupFilter() != "" {
		t.Fatalf("Esc from the pod's threads: cgroups %v, filter %q, want the cgroup list", m.table.Cgroups(), m.table.CgroupFilter())
	}
	if r, _ := m.table.Selected(); r.Cgroup != tuitest.PodCgroup {
		t.Errorf("selected %q after Esc, want the pod it came from", r.Cgroup)
	}
	if screen := ansi.Strip(m.Render()); strings.Contains(screen, " in pod") || !strings.Contains(screen, "pingpong.service") {
		t.Errorf("the screen should list the cgroups again:\n%s", screen)
	}
}
