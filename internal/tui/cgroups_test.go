package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// H twice shows cgroups; Enter on one lists its threads, Esc shows all again.
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
	if m.table.CgroupFilter() != "" || len(m.table.Rows()) != 4 {
		t.Errorf("Esc should show every process again: filter %q, %d rows", m.table.CgroupFilter(), len(m.table.Rows()))
	}
}
