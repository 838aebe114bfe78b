package table

import (
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func newContainerTable(w, h int) Model {
	m := New(theme.New(false, true), keys.New(), 1000)
	m.SetSize(w, h)
	s := tuitest.WithContainers()
	m.SetSnapshot(&s)
	return m
}

// On a node the rows name their containers and pods; on a host without
// containers the columns stay away (TestColumnsDropByPriority).
func TestViewContainers(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
	}{{"80x20", 80, 20}, {"160x20", 160, 20}} {
		for _, mode := range []string{"threads", "processes", "cgroups"} {
			name := sz.name + "-" + mode
			t.Run(name, func(t *testing.T) {
				m := newContainerTable(sz.w, sz.h)
				m.SetProcesses(mode == "processes")
				m.SetCgroups(mode == "cgroups")
				got := tuitest.Render(t, m.View(), colorprofile.Ascii)
				tuitest.CheckFits(t, got, sz.w, sz.h)
				tuitest.Golden(t, name, got)
			})
		}
	}
}

func TestContainerColumns(t *testing.T) {
	m := newContainerTable(160, 10)
	head := strings.Fields(tuitest.Render(t, strings.Split(m.View(), "\n")[0], colorprofile.NoTTY))
	want := []string{"PID", "TID", "COMM", "CONTAINER", "POD", "CSW/s", "NVCSW/s", "▼TOTAL/s", "%CPU", "WAIT%", "MIGR/s", "CPUS", "WHY"}
	if diff := cmp.Diff(want, head); diff != "" {
		t.Errorf("columns (-want +got)\n%s", diff)
	}
	row := ""
	for _, l := range strings.Split(tuitest.Render(t, m.View(), colorprofile.NoTTY), "\n") {
		if strings.Contains(l, "payments-api") {
			row = l
		}
	}
	if !strings.Contains(row, "shop/checkout-7d9f8c-x2bq") {
		t.Errorf("the pod's row does not name the pod: %q", row)
	}
}

// The filter finds rows by their pod's, namespace's and container's names.
func TestFilterContainers(t *testing.T) {
	m := newContainerTable(160, 30)
	for _, f := range []string{"payments", "checkout-7d9f", "SHOP", "3f1c2b"} {
		m.SetFilter(f)
		rows := m.Rows()
		if len(rows) == 0 {
			t.Errorf("filter %q: no rows", f)
		}
		for _, r := range rows {
			if r.Container != tuitest.PodContainer {
				t.Errorf("filter %q: row %s (%s) is not the pod's", f, r.Key, r.Comm)
			}
		}
	}
	m.SetFilter("no-such-pod")
	if n := len(m.Rows()); n != 0 {
		t.Errorf("filter no-such-pod: %d rows", n)
	}
	var none *model.Container
	if podCell(none) != "" {
		t.Error("a row without container has a pod")
	}
}
