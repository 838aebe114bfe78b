package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Under hidepid a text run says once, before its first report, what is
// hidden, and labels the remainder row as the hidden processes'; every JSON
// line says "hidepid".
func TestHidepidNoteOnceAndLabel(t *testing.T) {
	for _, procs := range []bool{false, true} {
		var b bytes.Buffer
		w := NewText(&b, Options{Processes: procs, HidePID: "invisible"})
		for range 2 {
			if err := w.Write(snapshot()); err != nil {
				t.Fatal(err)
			}
		}
		out := b.String()
		if n := strings.Count(out, "note: the procfs is mounted hidepid=invisible"); n != 1 || !strings.HasPrefix(out, "note: ") {
			t.Errorf("processes=%v: the hidepid note %d times, want once, first:\n%s", procs, n, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "(no thread row)") && !strings.HasPrefix(l, "note: ") && !strings.HasSuffix(l, "hidden tasks (hidepid)") {
				t.Errorf("processes=%v: remainder row not labelled as hidden tasks: %q", procs, l)
			}
		}
		if strings.Contains(out, "new/exited tasks") {
			t.Errorf("processes=%v: the remainder is still said to be new/exited tasks:\n%s", procs, out)
		}
	}
	for _, c := range []struct{ hidepid, want string }{{"invisible", "invisible"}, {"", "<absent>"}} {
		var b bytes.Buffer
		if err := NewJSON(&b, Options{HidePID: c.hidepid}).Write(snapshot()); err != nil {
			t.Fatal(err)
		}
		var r map[string]any
		if err := json.Unmarshal(b.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got := "<absent>"
		if v, ok := r["hidepid"]; ok {
			got, _ = v.(string)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("JSON hidepid with %q (-want +got):\n%s", c.hidepid, diff)
		}
	}
}
