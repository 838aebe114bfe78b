package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
)

// The process and cgroup rows of text and JSON are the fields tables'
// columns, in their order: a column added there shows in both.
func TestRowsFollowTheirTables(t *testing.T) {
	s := snapshot()
	s.Processes[0].Container = &model.Container{Runtime: "docker", ID: "3f1c", Name: "web"}
	s.Cgroups[0].Container = s.Processes[0].Container

	var b bytes.Buffer
	if err := NewJSON(&b, Options{}).Write(s); err != nil {
		t.Fatal(err)
	}
	// As cAdvisor names them, empty keys left out.
	if want := `"cpu_pct":121.25,"container":{"runtime":"docker","id":"3f1c","name":"web"}}`; !strings.Contains(b.String(), want) {
		t.Errorf("process row lacks %s:\n%s", want, b.Bytes())
	}
	var r struct {
		Processes, Cgroups []json.RawMessage
	}
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, b.Bytes())
	}
	if diff := cmp.Diff(jsonKeys(fields.Process[:]), objectKeys(t, r.Processes[0])); diff != "" {
		t.Errorf("process keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(jsonKeys(fields.Cgroup[:]), objectKeys(t, r.Cgroups[0])); diff != "" {
		t.Errorf("cgroup keys (-want +got):\n%s", diff)
	}

	for _, c := range []struct {
		opts Options
		want []string
	}{
		{Options{Processes: true}, textTitles(fields.Process[:])},
		{Options{Cgroups: true}, textTitles(fields.Cgroup[:])},
	} {
		b.Reset()
		if err := NewText(&b, c.opts).Write(s); err != nil {
			t.Fatal(err)
		}
		header := strings.Split(b.String(), "\n")[1]
		if diff := cmp.Diff(c.want, strings.Fields(header)); diff != "" {
			t.Errorf("%+v: text header (-want +got):\n%s", c.opts, diff)
		}
	}
}

func jsonKeys[P any](cols []fields.Column[P]) []string {
	var keys []string
	for _, c := range cols {
		if c.JSON != "" {
			keys = append(keys, c.JSON)
		}
	}
	return keys
}

func textTitles[P any](cols []fields.Column[P]) []string {
	var titles []string
	for _, c := range cols {
		if c.TextTitle != "" {
			titles = append(titles, c.TextTitle)
		}
	}
	return titles
}

// objectKeys are an object's keys in the order written.
func objectKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	if _, err := d.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for d.More() {
		k, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
