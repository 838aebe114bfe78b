package cli

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// checkPrintable fails on anything in out a terminal could act on.
func checkPrintable(t *testing.T, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("output is not valid UTF-8:\n%q", out)
	}
	for _, r := range string(out) {
		if (r < ' ' && r != '\n') || (r >= 0x7f && r <= 0x9f) || unicode.Is(unicode.Cf, r) {
			t.Errorf("output holds %U:\n%q", r, out)
			return
		}
	}
}

// TestBatchTextWithHostileThreadNames: thread names with escapes, control
// characters, bad UTF-8, a bidi override and CJK come out clean, one row
// each, and the columns after the name line up in terminal cells.
func TestBatchTextWithHostileThreadNames(t *testing.T) {
	bin := testutil.Binary(t)
	pid, tids := testutil.StartHostileNames(t)
	out, err := exec.Command(bin, "-b", "-n", "1", "-d", "0.3", "--top", "0", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatal(err)
	}
	checkPrintable(t, out)
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	header := lines[1]
	// Where TOTAL/s ends in the header: each row's third number ends there.
	want := strings.Index(header, "TOTAL/s") + len("TOTAL/s")
	for i, tid := range tids {
		var rows []string
		for _, l := range lines[2:] {
			if f := strings.Fields(l); len(f) > 1 && f[1] == strconv.Itoa(tid) {
				rows = append(rows, l)
			}
		}
		if len(rows) != 1 {
			t.Errorf("thread %d (%q) is on %d lines, want 1:\n%s", tid, testutil.HostileNames[i], len(rows), out)
			continue
		}
		f := strings.Fields(rows[0])
		if f[2] != testutil.HostileNamesClean[i] {
			t.Errorf("name %q printed as %q, want %q", testutil.HostileNames[i], f[2], testutil.HostileNamesClean[i])
		}
		end := 0
		for _, field := range f[:6] {
			end += strings.Index(rows[0][end:], field) + len(field)
		}
		if got := ansi.StringWidth(rows[0][:end]); got != want {
			t.Errorf("row of %q: TOTAL/s ends at cell %d, the header's at %d:\n%s\n%s", testutil.HostileNames[i], got, want, header, rows[0])
		}
	}
}

// TestBatchJSONWithHostileThreadNames: the same names in JSON lines, where
// jq would otherwise print the escapes it decodes.
func TestBatchJSONWithHostileThreadNames(t *testing.T) {
	bin := testutil.Binary(t)
	pid, tids := testutil.StartHostileNames(t)
	out, err := exec.Command(bin, "-b", "-n", "1", "-d", "0.3", "-o", "json", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatal(err)
	}
	checkPrintable(t, out)
	if bytes.Contains(out, []byte(`\u00`)) {
		t.Errorf("JSON escapes a control character, so the name reached it unsanitized:\n%s", out)
	}
	var r struct {
		Processes []struct {
			PID  int    `json:"pid"`
			Comm string `json:"comm"`
		} `json:"processes"`
		Threads []struct {
			TID  int    `json:"tid"`
			Comm string `json:"comm"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	names := map[int]string{}
	for _, th := range r.Threads {
		names[th.TID] = th.Comm
	}
	var got []string
	for _, tid := range tids {
		got = append(got, names[tid])
	}
	if diff := cmp.Diff(testutil.HostileNamesClean, got); diff != "" {
		t.Errorf("thread names (-want +got)\n%s", diff)
	}
	if len(r.Processes) != 1 || r.Processes[0].Comm != testutil.HostileProcessNameClean {
		t.Errorf("processes = %+v, want one named %q", r.Processes, testutil.HostileProcessNameClean)
	}
}
