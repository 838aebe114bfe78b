package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
)

// An interval without host-wide rates says so in both formats: "-" and the
// reason in text, null and no_rates in JSON; never a 0 that reads as a
// quiet host.
func TestNoHostRatesSaidSo(t *testing.T) {
	s := snapshot()
	s.System.ContextSwitchesPerSec, s.System.InterruptsPerSec, s.System.ReschedIPIsPerSec, s.UnattributedPerSec = 0, 0, 0, 0
	s.System.NoRates = model.NoRatesStepBack
	s.Spike = model.Spike{}
	var text bytes.Buffer
	if err := NewText(&text, Options{}).Write(s); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(text.String(), "\n")
	for _, want := range []string{"cs/s -  in/s -  res/s -", "  no host rates: " + model.NoRatesStepBack} {
		if !strings.Contains(first, want) {
			t.Errorf("system line %q lacks %q", first, want)
		}
	}
	var js bytes.Buffer
	if err := NewJSON(&js, Options{}).Write(s); err != nil {
		t.Fatal(err)
	}
	var r struct{ System map[string]any }
	if err := json.Unmarshal(js.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, k := range []string{"cs_per_s", "intr_per_s", "resched_ipi_per_s", "unattributed_cs_per_s", "no_rates"} {
		v, ok := r.System[k]
		if !ok {
			v = "absent"
		}
		got[k] = v
	}
	want := map[string]any{"cs_per_s": nil, "intr_per_s": nil, "resched_ipi_per_s": nil, "unattributed_cs_per_s": nil,
		"no_rates": model.NoRatesStepBack}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON system (-want +got)\n%s", diff)
	}
}

// JSON counts the unreadable tasks the text report names.
func TestJSONCountsUnreadableTasks(t *testing.T) {
	for _, n := range []int{0, 3} {
		s := snapshot()
		s.Unreadable = n
		var text, js bytes.Buffer
		if err := NewText(&text, Options{}).Write(s); err != nil {
			t.Fatal(err)
		}
		if err := NewJSON(&js, Options{}).Write(s); err != nil {
			t.Fatal(err)
		}
		var r struct {
			System struct {
				Unreadable *int `json:"unreadable_tasks"`
			}
		}
		if err := json.Unmarshal(js.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.System.Unreadable == nil || *r.System.Unreadable != n {
			t.Errorf("%d unreadable: JSON system.unreadable_tasks = %v, want %d", n, r.System.Unreadable, n)
		}
		if said := strings.Contains(text.String(), "3 tasks unreadable"); said != (n == 3) {
			t.Errorf("%d unreadable: text says %v", n, said)
		}
	}
}

// An absurd rate (a counter that jumped) is abbreviated in every text
// table, so each column still ends under its title.
func TestTextAbsurdRatesKeepToTheirColumns(t *testing.T) {
	const absurd = 6639127543485.86
	for _, o := range []Options{{}, {Processes: true}, {Cgroups: true}} {
		s := snapshot()
		th := &s.Threads[0]
		th.VoluntaryPerSec, th.CPUPercent, th.WaitPercent, th.PerSec[model.Migrations] = absurd, absurd, absurd, absurd
		p := &s.Processes[0]
		p.VoluntaryPerSec, p.CPUPercent, p.WaitPercent = absurd, absurd, absurd
		c := &s.Cgroups[0]
		c.VoluntaryPerSec, c.CPUPercent, c.ThrottledPercent, c.ThrottledMsPerSec, c.LimitCPUs = absurd, absurd, absurd, absurd, absurd
		s.UnattributedPerSec = absurd
		var b bytes.Buffer
		if err := NewText(&b, o).Write(s); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		head := lines[1]
		if strings.Contains(b.String(), "6639127543485") {
			t.Errorf("%+v: an absurd figure printed whole:\n%s", o, b.String())
		}
		for _, title := range []string{"CSWCH/s", "TOTAL/s", "%CPU", "WAIT%", "THRTL%"} {
			i := strings.Index(head, title)
			if i < 0 {
				continue
			}
			end := i + len(title)
			for _, l := range lines[2:4] {
				if len(l) < end || l[end-1] == ' ' || end < len(l) && l[end] != ' ' {
					t.Errorf("%+v: %s not right-aligned under its title:\n%s\n%s", o, title, head, l)
				}
			}
		}
	}
}
