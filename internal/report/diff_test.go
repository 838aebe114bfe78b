package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
)

// scaled is in with every thread's switches since the first sample, and
// the host's, multiplied by f: the same run switching f times as often,
// on the same CPU.
func scaled(in []model.Sample, f float64) []model.Sample {
	out := make([]model.Sample, len(in))
	first := map[int]model.TaskCounters{}
	for _, t := range in[0].Tasks {
		first[t.TID] = t
	}
	cs0 := in[0].System.ContextSwitches
	for i, s := range in {
		s.Tasks = append([]model.TaskCounters(nil), s.Tasks...)
		for j := range s.Tasks {
			t := &s.Tasks[j]
			t0 := first[t.TID]
			t.VoluntarySwitches = t0.VoluntarySwitches + uint64(f*float64(t.VoluntarySwitches-t0.VoluntarySwitches))
			t.InvoluntarySwitches = t0.InvoluntarySwitches + uint64(f*float64(t.InvoluntarySwitches-t0.InvoluntarySwitches))
		}
		s.System.ContextSwitches = cs0 + uint64(f*float64(s.System.ContextSwitches-cs0))
		out[i] = s
	}
	return out
}

func TestDiffOfARecordingWithItselfFindsNoDifference(t *testing.T) {
	dir := t.TempDir()
	path := writeRecording(t, dir, "a.ctxrec", testHeader(), burstSamples(60, 30, 36))
	d := compareFiles(t, path, path)
	if f := d.Findings(); len(f) != 0 {
		t.Errorf("findings of a recording against itself:\n%s", strings.Join(f, "\n"))
	}
	groups := 0
	for _, r := range d.Rows {
		if r.Only != "" {
			t.Errorf("%s %s is on one side only", r.Kind, r.Name)
		}
		if r.Kind == "group" {
			groups++
		}
		for _, m := range r.Metrics {
			if m.Verdict != VerdictNoDifference && m.Verdict != VerdictUnknown {
				t.Errorf("%s %s %s: verdict %q", r.Kind, r.Name, m.Name, m.Verdict)
			}
		}
	}
	if groups == 0 {
		t.Error("no group compared")
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, d); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "No clear difference anywhere.") {
		t.Errorf("text does not say there is no difference:\n%s", buf.String())
	}
}

func TestDiffFindsAKnownFactorWithinFivePercent(t *testing.T) {
	dir := t.TempDir()
	in := steadySamples(40)
	a := writeRecording(t, dir, "a.ctxrec", testHeader(), in)
	b := writeRecording(t, dir, "b.ctxrec", testHeader(), scaled(in, 3))
	d := compareFiles(t, a, b)
	var checked int
	for _, r := range d.Rows {
		if r.Kind == "cgroup" {
			continue
		}
		for _, m := range r.Metrics {
			switch {
			case m.Name == mVol || (r.Kind == "host" && m.Name == "cs/s"):
				checked++
				if math.Abs(m.Ratio/3-1) > 0.05 {
					t.Errorf("%s %s: B/A = %.3f, want 3 ±5%%", r.Name, m.Name, m.Ratio)
				}
				if m.Verdict != VerdictHigher {
					t.Errorf("%s %s: verdict %q, want %q", r.Name, m.Name, m.Verdict, VerdictHigher)
				}
			case m.Name == mCPU || m.Name == mWait:
				// The same CPU time: no difference to state.
				if m.Verdict != VerdictNoDifference {
					t.Errorf("%s %s: verdict %q, want %q", r.Name, m.Name, m.Verdict, VerdictNoDifference)
				}
			}
		}
	}
	if checked < 4 {
		t.Errorf("checked %d switch rates, want the host's and at least three groups'", checked)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Errorf("JSON does not parse: %v", err)
	}
}

func TestDiffListsGroupsOnOneSideOnly(t *testing.T) {
	dir := t.TempDir()
	a := writeRecording(t, dir, "a.ctxrec", testHeader(), steadySamples(40))
	b := writeRecording(t, dir, "b.ctxrec", testHeader(), burstSamples(40, 1, 40))
	d := compareFiles(t, a, b)
	found := false
	for _, r := range d.Rows {
		if r.Kind == "group" && strings.HasPrefix(r.Name, burstName) {
			found = true
			if r.Only != "B" {
				t.Errorf("%s: only = %q, want B", r.Name, r.Only)
			}
		}
	}
	if !found {
		t.Errorf("no row for %s", burstName)
	}
	var buf bytes.Buffer
	if err := WriteDiffHTML(&buf, d, "test"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "only in B") {
		t.Error("the page does not say the group is only in B")
	}
}

func TestSpreadIsTheMedianAndTheMiddleHalf(t *testing.T) {
	s := spreadOf([]float64{5, 1, math.NaN(), 3, 2, 4})
	if s.Median != 3 || s.Low != 2 || s.High != 4 || s.N != 5 {
		t.Errorf("spread = %+v, want median 3, middle half 2–4 over 5", s)
	}
	if apart(Spread{Low: 1, High: 3, N: 5}, Spread{Low: 3, High: 5, N: 5}) {
		t.Error("touching middle halves are apart")
	}
	if !apart(Spread{Low: 1, High: 2.9, N: 5}, Spread{Low: 3, High: 5, N: 5}) {
		t.Error("separate middle halves overlap")
	}
}
