package table

import (
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/tui/keys"
	"github.com/ctxtop/ctxtop/internal/tui/theme"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

func newContainerTable(w, h int) Model { return tableOf(w, h, tuitest.WithContainers()) }

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

func newPodTable(w, h int) Model {
	m := New(theme.New(false, true), keys.New(), 1000)
	m.SetSize(w, h)
	s := tuitest.WithPods()
	m.SetSnapshot(&s)
	m.SetCgroups(true)
	return m
}

// The cgroup view on a node is the tree namespace → pod → container.
func TestViewCgroupTree(t *testing.T) {
	for _, sz := range []struct {
		name string
		w, h int
	}{{"80x24", 80, 24}, {"40x10", 40, 10}} {
		t.Run(sz.name, func(t *testing.T) {
			m := newPodTable(sz.w, sz.h)
			got := tuitest.Render(t, m.View(), colorprofile.Ascii)
			tuitest.CheckFits(t, got, sz.w, sz.h)
			tuitest.Golden(t, sz.name, got)
		})
	}
}

func TestCgroupTreeOrder(t *testing.T) {
	m := newPodTable(80, 30)
	shop, checkout := "cns:shop", "cpod:"+tuitest.PodContainer.PodUID
	cart, dns := "cpod:2e3f4a5b-6c7d-8e9f-0a1b-2c3d4e5f6a7b", "cpod:3f4a5b6c-7d8e-9f0a-1b2c-3d4e5f6a7b8c"
	anon := "cpod:4a5b6c7d-8e9f-0a1b-2c3d-4e5f6a7b8c9d"
	var builder, proxy, cartRedis, coredns, anonCtr string
	for _, c := range m.snap.Cgroups {
		switch c.Container.Label() {
		case "builder":
			builder = CgroupKey(c.Path)
		case "istio-proxy":
			proxy = CgroupKey(c.Path)
		case "redis":
			cartRedis = CgroupKey(c.Path)
		case "coredns":
			coredns = CgroupKey(c.Path)
		case "6d5e4f3a2b1c":
			anonCtr = CgroupKey(c.Path)
		}
	}
	want := []string{
		CgroupKey(tuitest.ServiceCgroup),
		shop, checkout, CgroupKey(tuitest.PodCgroup), proxy, cart, cartRedis,
		builder,
		"cns:kube-system", dns, coredns,
		anon, anonCtr,
		CgroupKey("/"),
	}
	if diff := cmp.Diff(want, keysOf(m)); diff != "" {
		t.Errorf("tree by TOTAL/s (-want +got):\n%s", diff)
	}
	// Each level adds up to what is under it.
	rows := map[string]Row{}
	for _, r := range m.Rows() {
		rows[r.Key] = r
	}
	for _, sum := range []struct {
		parent string
		kids   []string
	}{{shop, []string{checkout, cart}}, {checkout, []string{CgroupKey(tuitest.PodCgroup), proxy}}, {"cns:kube-system", []string{dns}}} {
		p := rows[sum.parent]
		var total float64
		threads := 0
		for _, k := range sum.kids {
			total += rows[k].Total()
			threads += rows[k].TID
			if rows[k].Parent != sum.parent {
				t.Errorf("%s is under %q, want %s", k, rows[k].Parent, sum.parent)
			}
		}
		if p.Total() != total || p.TID != threads {
			t.Errorf("%s: %v/s in %d threads, its rows sum to %v/s in %d", sum.parent, p.Total(), p.TID, total, threads)
		}
	}
	if r := rows[checkout]; r.Vals[fields.Wait] != 43.2 || r.Why.String() != "throttled 43%" {
		t.Errorf("the pod of a throttled container: THRT%% %v, why %q", r.Vals[fields.Wait], r.Why.String())
	}
	// The filter keeps a container with the pod and namespace above it.
	m.SetFilter("istio")
	if diff := cmp.Diff([]string{shop, checkout, proxy}, keysOf(m)); diff != "" {
		t.Errorf("filtered (-want +got):\n%s", diff)
	}
}

func TestCgroupTreeFolds(t *testing.T) {
	m := newPodTable(80, 30)
	if !m.Foldable() {
		t.Fatal("the cgroup view on a node is not foldable")
	}
	checkout := "cpod:" + tuitest.PodContainer.PodUID
	m.Select(CgroupKey(tuitest.PodCgroup))
	m.picked = true
	// ← on a container selects its pod; ← again folds the pod.
	if !m.Fold(false) {
		t.Fatal("Fold(false) on a container changed nothing")
	}
	if r, _ := m.Selected(); r.Key != checkout || r.Folded {
		t.Errorf("after ← on a container: selected %s folded %v, want the open pod", r.Key, r.Folded)
	}
	if !m.Fold(false) {
		t.Fatal("Fold(false) on the pod changed nothing")
	}
	if r, _ := m.Selected(); r.Key != checkout || !r.Folded {
		t.Errorf("after ← on the pod: selected %s folded %v, want the folded pod", r.Key, r.Folded)
	}
	keys := keysOf(m)
	if slices.Contains(keys, CgroupKey(tuitest.PodCgroup)) || !slices.Contains(keys, "cns:shop") {
		t.Errorf("folded pod: rows %v", keys)
	}
	if v := tuitest.Render(t, m.View(), colorprofile.NoTTY); !strings.Contains(v, "├▸ checkout-7d9f8c-x2bq") {
		t.Errorf("the folded pod is not marked ▸:\n%s", v)
	}
	// ← on a folded pod goes up to its namespace; ← folds that.
	m.Fold(false)
	m.Fold(false)
	if r, _ := m.Selected(); r.Key != "cns:shop" || !r.Folded {
		t.Errorf("selected %s folded %v, want the folded namespace", r.Key, r.Folded)
	}
	if n := len(m.Rows()); n != 9 {
		t.Errorf("%d rows with shop folded, want 9", n)
	}
	m.Fold(true)
	m.Select(checkout)
	m.Fold(true)
	if n := len(m.Rows()); n != 14 {
		t.Errorf("%d rows unfolded, want 14", n)
	}
	// Without pods there is nothing to fold, and ← and → are left alone.
	m = newTable(80, 20)
	m.SetCgroups(true)
	if m.Foldable() || m.Fold(false) {
		t.Error("a cgroup view without pods folds")
	}
}
