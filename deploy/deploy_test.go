// Tests for the files users copy: Prometheus rules and their unit tests, the
// systemd unit and the Grafana dashboard. e2e_test.go runs every PromQL
// expression in them against a live Prometheus scraping ctxtop serve.
package deploy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// needTool returns the path of an external program the test needs. CI
// installs it (.ci/run), so there a missing one fails; elsewhere it skips.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s not installed", name)
	}
	return p
}

func deployDir() string { return filepath.Join(testutil.RepoRoot(), "deploy") }

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestPromtoolCheckRulesAndConfig(t *testing.T) {
	promtool := needTool(t, "promtool")
	dir := filepath.Join(deployDir(), "prometheus")
	run(t, dir, promtool, "check", "rules", "ctxtop.rules.yml", "ctxtop.alerts.yml")
	run(t, dir, promtool, "check", "config", "prometheus.yml")
}

func TestPromtoolRuleUnitTests(t *testing.T) {
	promtool := needTool(t, "promtool")
	dir := filepath.Join(deployDir(), "prometheus")
	tests, err := filepath.Glob(filepath.Join(dir, "tests", "*.yml"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no rule unit tests under %s: %v", dir, err)
	}
	run(t, dir, promtool, append([]string{"test", "rules"}, tests...)...)
}

// unitExecStart returns the arguments after the binary on the unit's
// ExecStart line.
func unitExecStart(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(), "systemd", "ctxtop.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			f := strings.Fields(rest)
			if len(f) < 2 || filepath.Base(f[0]) != "ctxtop" || f[1] != "serve" {
				t.Fatalf("ExecStart %q does not run ctxtop serve", rest)
			}
			return f[2:]
		}
	}
	t.Fatal("the unit has no ExecStart")
	return nil
}

// The unit's command line is one ctxtop accepts: run it (on another port).
func TestSystemdUnitCommandLineServes(t *testing.T) {
	var args []string
	for _, a := range unitExecStart(t) {
		if strings.HasPrefix(a, "--web.listen-address=") {
			a = "--web.listen-address=127.0.0.1:0"
		}
		args = append(args, a)
	}
	addr := testutil.StartServe(t, args...)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s %v", resp.Status, err)
	}
	// This host's real names (kernel threads, odd comms) pass the linter.
	cmd := exec.Command(needTool(t, "promtool"), "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("promtool check metrics on this host's exposition: %v\n%s", err, out)
	}
}

func TestSystemdUnitVerifies(t *testing.T) {
	analyze := needOptional(t, "systemd-analyze")
	b, err := os.ReadFile(filepath.Join(deployDir(), "systemd", "ctxtop.service"))
	if err != nil {
		t.Fatal(err)
	}
	// Point ExecStart at a binary that exists here; drop the man page
	// reference, which verify tries to resolve.
	var lines []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Documentation=") {
			continue
		}
		lines = append(lines, strings.Replace(line, "/usr/local/bin/ctxtop", testutil.Binary(t), 1))
	}
	unit := filepath.Join(t.TempDir(), "ctxtop.service")
	if err := os.WriteFile(unit, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run(t, "", analyze, "verify", unit); out != "" {
		t.Errorf("systemd-analyze verify:\n%s", out)
	}
}

// needOptional is for tools CI does not install: the test skips without them.
func needOptional(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed", name)
	}
	return p
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	Title      string
	Templating struct {
		List []struct {
			Name  string
			Type  string
			Query json.RawMessage
		}
	}
	Panels []struct {
		Title      string
		Type       string
		Datasource *struct{ Type, UID string }
		Targets    []struct{ Expr string }
	}
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir(), "grafana", "ctxtop.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	return d
}

func TestDashboardHasHostGroupAndThreadGroupPanels(t *testing.T) {
	d := loadDashboard(t)
	var metrics = map[string]bool{
		"ctxtop_context_switches_total": false, "ctxtop_process_context_switches_total": false,
		"ctxtop_thread_group_context_switches_total": false,
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not use the datasource variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			for m := range metrics {
				if strings.Contains(tg.Expr, m) {
					metrics[m] = true
				}
			}
		}
	}
	for m, seen := range metrics {
		if !seen {
			t.Errorf("no panel queries %s", m)
		}
	}
}
