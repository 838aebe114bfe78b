package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// mutableFixture is a copy of testdata/proc whose counters a test rewrites
// between passes.
func mutableFixture(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "proc")
	if err := os.CopyFS(root, os.DirFS(filepath.Join(testutil.RepoRoot(), "testdata", "proc"))); err != nil {
		t.Fatal(err)
	}
	return root
}

// overwrite replaces old with new, of the same length, in place: ctxtop
// keeps files such as stat and schedstat open and reads them again with
// pread, so a new file renamed over the old one would go unseen, and a
// truncation could be read half-written.
func overwrite(t *testing.T, path, old, new string) {
	t.Helper()
	if len(old) != len(new) {
		t.Fatalf("overwrite %s: %q and %q differ in length", path, old, new)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(old))
	if i < 0 {
		t.Fatalf("%s holds no %q:\n%s", path, old, b)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(new), int64(i)); err != nil {
		t.Fatal(err)
	}
}

// replace rewrites a file ctxtop opens afresh each time it reads it,
// whole, by a rename.
func replace(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s holds no %q", path, old)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// drive runs ctxtop with args and, as soon as report i begins (its system
// line, the whole report with -o json), calls next(i) to rewrite the tree
// for the pass after it: that pass is at least half an interval away. It
// returns the reports and stderr.
func drive(t *testing.T, args []string, next func(i int)) (reports []string, stderr string) {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t), args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "{") || strings.Contains(line, "  cs/s ") {
			reports = append(reports, "")
			next(len(reports))
		}
		if len(reports) > 0 && line != "" {
			reports[len(reports)-1] += line + "\n"
		}
	}
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ctxtop %v: %v\nstderr: %s\nreports: %q", args, err, errb.String(), reports)
	}
	return reports, errb.String()
}

type systemJSON struct {
	CS      *float64 `json:"cs_per_s"`
	NoRates string   `json:"no_rates"`
}

// rate is cs_per_s as a message shows it.
func (s systemJSON) rate() string {
	if s.CS == nil {
		return "null"
	}
	return strconv.FormatFloat(*s.CS, 'f', 2, 64)
}

func systemOf(t *testing.T, report string) systemJSON {
	t.Helper()
	var r struct{ System systemJSON }
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("not a JSON report: %v\n%s", err, report)
	}
	return r.System
}

// The tester's case: /proc/stat's ctxt goes back, then forward to where it
// was and on. The step back and the interval after it have no rate, said
// so; the climb back is never one interval's switches (5 million a second
// here), and the rate resumes after.
func TestStatSteppingBackGivesNoRateNotASpike(t *testing.T) {
	root := mutableFixture(t)
	stat := filepath.Join(root, "stat")
	// Seven digits each, so every rewrite is in place.
	values := []string{"2727877", "2728877", "0000010", "2729877", "2730877"}
	cur := values[0]
	reports, _ := drive(t, []string{"-b", "-o", "json", "--proc", root, "-d", "0.5", "-n", "5"}, func(i int) {
		if i < len(values) {
			overwrite(t, stat, "ctxt "+cur, "ctxt "+values[i])
			cur = values[i]
		}
	})
	if len(reports) != 5 {
		t.Fatalf("want 5 reports, got %d: %q", len(reports), reports)
	}
	for i, r := range reports {
		sys := systemOf(t, r)
		if sys.CS != nil && *sys.CS > 10_000 {
			t.Errorf("report %d: cs_per_s %v from counters that moved 1,000 an interval at most", i+1, *sys.CS)
		}
		// Reports 3 (the step back) and 4 (after it) have no rate.
		noRate := i == 2 || i == 3
		if (sys.CS == nil) != noRate || (sys.NoRates != "") != noRate {
			t.Errorf("report %d: cs_per_s %s, no_rates %q; want a rate: %v", i+1, sys.rate(), sys.NoRates, !noRate)
		}
	}
	for _, i := range []int{1, 4} {
		if sys := systemOf(t, reports[i]); sys.CS == nil || *sys.CS <= 0 {
			t.Errorf("report %d: cs_per_s %s, want the 1,000 switches of its interval as a rate", i+1, sys.rate())
		}
	}
}

// A thread counter that leaps (a rewritten tree, a buggy kernel) gives an
// absurd rate; the text report abbreviates it, so its columns still line
// up under their titles.
func TestAbsurdThreadRateKeepsTheColumns(t *testing.T) {
	root := mutableFixture(t)
	task := filepath.Join(root, "100", "task", "101")
	reports, _ := drive(t, []string{"-b", "--proc", root, "-d", "0.5", "-n", "2"}, func(i int) {
		if i == 1 {
			// It ran (schedstat's third field moved) and switched
			// 6.6 trillion times.
			overwrite(t, filepath.Join(task, "schedstat"), " 901", " 902")
			replace(t, filepath.Join(task, "status"), "voluntary_ctxt_switches:\t900\n", "voluntary_ctxt_switches:\t6639127544385\n")
		}
	})
	if len(reports) != 2 {
		t.Fatalf("want 2 reports, got %d: %q", len(reports), reports)
	}
	lines := strings.Split(reports[1], "\n")
	var head, row string
	for _, l := range lines {
		if strings.Contains(l, "TOTAL/s") {
			head = l
		}
		if strings.Contains(l, "pool-1-thread-1") {
			row = l
		}
	}
	if head == "" || row == "" {
		t.Fatalf("no header or no row for the thread:\n%s", reports[1])
	}
	for _, title := range []string{"CSWCH/s", "NVCSWCH/s", "TOTAL/s", "%CPU"} {
		end := strings.Index(head, title) + len(title)
		if len(row) < end || row[end-1] == ' ' || end < len(row) && row[end] != ' ' {
			t.Errorf("%s does not end under its title:\n%s\n%s", title, head, row)
		}
	}
	if !strings.Contains(row, "T ") {
		t.Errorf("the absurd rate is not abbreviated (T):\n%s", row)
	}
}

// A /proc/stat that turns malformed mid-run does not end batch mode: the
// reports say which intervals have no host figures and why, and carry on.
func TestMalformedStatMidRunCarriesOn(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			root := mutableFixture(t)
			stat := filepath.Join(root, "stat")
			reports, _ := drive(t, []string{"-b", "-o", format, "--proc", root, "-d", "0.5", "-n", "4"}, func(i int) {
				switch i {
				case 1:
					overwrite(t, stat, "ctxt 2727877", "ctxt 27x7877")
				case 2:
					overwrite(t, stat, "ctxt 27x7877", "ctxt 2728877")
				}
			})
			if len(reports) != 4 {
				t.Fatalf("want 4 reports, the run carrying on; got %d: %q", len(reports), reports)
			}
			for i, r := range reports {
				noRate := i == 1 || i == 2
				var said bool
				if format == "json" {
					sys := systemOf(t, r)
					said = sys.CS == nil && strings.Contains(sys.NoRates, "ctxt")
				} else {
					first, _, _ := strings.Cut(r, "\n")
					said = strings.Contains(first, "cs/s -") && strings.Contains(first, "no host rates:") && strings.Contains(first, "ctxt")
				}
				if said != noRate {
					t.Errorf("report %d says no host rates: %v, want %v:\n%s", i+1, said, noRate, r)
				}
			}
		})
	}
}

// serve follows the same rule: the scrape during which /proc/stat is
// malformed is served without the host's series (a gap, not a counter
// reset to 0), counted as a gathering error, and the series come back.
func TestServeCarriesOnPastAMalformedStat(t *testing.T) {
	root := mutableFixture(t)
	stat := filepath.Join(root, "stat")
	addr := testutil.StartServe(t, "--proc", root, "--web.listen-address", "127.0.0.1:0")
	scrape := func() (int, string) {
		t.Helper()
		// Past the exporter's 0.5 s cache window: a fresh pass.
		time.Sleep(600 * time.Millisecond)
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	has := func(body, series string) bool { return strings.Contains(body, "\n"+series) }
	code, body := scrape()
	if code != 200 || !has(body, "ctxtop_context_switches_total 2.727877e+06") && !has(body, "ctxtop_context_switches_total 2727877") {
		t.Fatalf("first scrape: %d\n%s", code, body)
	}
	overwrite(t, stat, "ctxt 2727877", "ctxt 27x7877")
	code, body = scrape()
	if code != 200 {
		t.Errorf("scrape with a malformed stat: status %d, want 200 with the rest\n%.500s", code, body)
	}
	if has(body, "ctxtop_context_switches_total") {
		t.Errorf("a malformed stat still gave ctxtop_context_switches_total:\n%s", body)
	}
	if !has(body, "ctxtop_process_context_switches_total") {
		t.Errorf("the process series went missing with the host's:\n%s", body)
	}
	if !has(body, `promhttp_metric_handler_errors_total{cause="gathering"} 1`) {
		t.Errorf("the failed read is not counted:\n%s", body)
	}
	overwrite(t, stat, "ctxt 27x7877", "ctxt 2728877")
	if code, body = scrape(); code != 200 || !has(body, "ctxtop_context_switches_total") {
		t.Errorf("after stat is whole again: %d, host series back: %v", code, has(body, "ctxtop_context_switches_total"))
	}
}
