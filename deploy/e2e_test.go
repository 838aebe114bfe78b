package deploy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/ctxtop/ctxtop/internal/procfs"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// prom is a Prometheus server the test started.
type prom struct {
	t    *testing.T
	base string
}

type promSample struct {
	Metric map[string]string
	Value  float64
}

// startPrometheus runs Debian's prometheus on a free loopback port with a
// temporary data directory, scraping target every second and evaluating the
// shipped rules every second. It is stopped when the test ends.
func startPrometheus(t *testing.T, target string) *prom {
	t.Helper()
	bin := needTool(t, "prometheus")
	rules := filepath.Join(deployDir(), "prometheus")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
  - %s
scrape_configs:
  - job_name: ctxtop
    scrape_timeout: 1s
    static_configs:
      - targets: [%q]
`, filepath.Join(rules, "ctxtop.rules.yml"), filepath.Join(rules, "ctxtop.alerts.yml"), target)
	return runPrometheus(t, bin, cfg)
}

// runPrometheus runs Debian's prometheus (bin) with the configuration cfg
// on a free loopback port, until the test ends.
func runPrometheus(t *testing.T, bin, cfg string) *prom {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// A free port: bind to 0, note it, let go. Another process taking it in
	// between is possible but unlikely; Prometheus would then fail to start.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	p := &prom{t: t, base: "http://" + addr}
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("prometheus exited: %v\n%s", err, log.String())
		default:
		}
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("prometheus not ready after 30 s\n%s", log.String())
		}
	}
}

func (p *prom) get(path string, params url.Values) json.RawMessage {
	p.t.Helper()
	resp, err := http.Get(p.base + path + "?" + params.Encode())
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string
		Data   json.RawMessage
		Error  string
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		p.t.Fatalf("%s %v: %s %s", path, params, r.Error, body)
	}
	return r.Data
}

// query evaluates expr at the given time (now if zero).
func (p *prom) query(expr string, at time.Time) []promSample {
	p.t.Helper()
	params := url.Values{"query": {expr}}
	if !at.IsZero() {
		params.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	var data struct {
		ResultType string
		Result     json.RawMessage
	}
	if err := json.Unmarshal(p.get("/api/v1/query", params), &data); err != nil {
		p.t.Fatal(err)
	}
	if data.ResultType != "vector" {
		p.t.Fatalf("%s: result type %s, want vector", expr, data.ResultType)
	}
	var raw []struct {
		Metric map[string]string
		Value  [2]any
	}
	if err := json.Unmarshal(data.Result, &raw); err != nil {
		p.t.Fatal(err)
	}
	out := make([]promSample, len(raw))
	for i, r := range raw {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			p.t.Fatalf("%s: value %v", expr, r.Value[1])
		}
		out[i] = promSample{Metric: r.Metric, Value: v}
	}
	return out
}

// series lists the series a selector matches.
func (p *prom) series(selector string) int {
	p.t.Helper()
	var list []map[string]string
	if err := json.Unmarshal(p.get("/api/v1/series", url.Values{"match[]": {selector}}), &list); err != nil {
		p.t.Fatal(err)
	}
	return len(list)
}

// timestamps returns the sample times of the single series a range
// selector matches, evaluated at the given time.
func (p *prom) timestamps(selector string, at time.Time) []time.Time {
	p.t.Helper()
	params := url.Values{"query": {selector}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	var data struct {
		ResultType string
		Result     []struct{ Values [][2]any }
	}
	if err := json.Unmarshal(p.get("/api/v1/query", params), &data); err != nil {
		p.t.Fatal(err)
	}
	if data.ResultType != "matrix" || len(data.Result) != 1 {
		p.t.Fatalf("%s: %s of %d series, want a matrix of one", selector, data.ResultType, len(data.Result))
	}
	var out []time.Time
	for _, v := range data.Result[0].Values {
		sec, _ := v[0].(float64)
		out = append(out, time.UnixMilli(int64(math.Round(sec*1000))))
	}
	return out
}

// waitFor polls expr until it returns data.
func (p *prom) waitFor(expr string, limit time.Duration) {
	p.t.Helper()
	for start := time.Now(); len(p.query(expr, time.Time{})) == 0; time.Sleep(200 * time.Millisecond) {
		if time.Since(start) > limit {
			p.t.Fatalf("no data for %s after %v", expr, limit)
		}
	}
}

// switchLog is the kernel's switch counts of some threads, polled.
type switchLog struct {
	at   []time.Time
	vals [][]float64 // [poll][thread]: voluntary + involuntary
}

// pollSwitches reads the threads' status every 2 ms for d, and then until
// Prometheus can have scraped past the end.
func pollSwitches(t *testing.T, fs procfs.FS, pid int, tids []int, d time.Duration) *switchLog {
	t.Helper()
	l := &switchLog{}
	start := time.Now()
	for time.Since(start) < d+1500*time.Millisecond {
		now := time.Now()
		row := make([]float64, len(tids))
		for i, tid := range tids {
			st, err := fs.TaskStatus(pid, tid)
			if err != nil {
				t.Fatalf("workload thread %d: %v", tid, err)
			}
			row[i] = float64(st.VoluntarySwitches + st.InvoluntarySwitches)
		}
		l.at, l.vals = append(l.at, now), append(l.vals, row)
		time.Sleep(2 * time.Millisecond)
	}
	return l
}

// valueAt is thread i's count at the first poll at or after when: the
// exporter reads the counters just after Prometheus stamps the scrape.
func (l *switchLog) valueAt(i int, when time.Time) float64 {
	for k, at := range l.at {
		if !at.Before(when) {
			return l.vals[k][i]
		}
	}
	return l.vals[len(l.vals)-1][i]
}

// TestPrometheusEndToEnd scrapes ctxtop serve with a real Prometheus every
// second while a ping-pong workload runs, then checks what Prometheus
// stored against the kernel's own counters, and runs every PromQL
// expression shipped in deploy/ against it.
func TestPrometheusEndToEnd(t *testing.T) {
	needTool(t, "prometheus")
	pid, tids := testutil.StartPingPong(t)
	group := strconv.Itoa(pid)
	addr := testutil.StartServe(t, "--web.listen-address=127.0.0.1:0", "-p", group, "--group-by", "pid")
	p := startPrometheus(t, addr)
	p.waitFor(`ctxtop_thread_group_context_switches_total{group="`+group+`",thread_group="pp-ping"}`, 20*time.Second)

	// The kernel's counts, polled every few milliseconds, against
	// Prometheus's rate() over a window that starts and ends on scrapes, so
	// rate() has nothing to extrapolate and the kernel's counts can be read
	// at the very instants Prometheus sampled.
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"pp-ping", "pp-pong"}
	klog := pollSwitches(t, fs, pid, tids, 12*time.Second)
	t1 := klog.at[len(klog.at)-1]
	stamps := p.timestamps(`ctxtop_context_switches_total[12s]`, t1)
	if len(stamps) < 5 {
		t.Fatalf("only %d scrapes in 12 s", len(stamps))
	}
	ta, tb := stamps[0], stamps[len(stamps)-1]
	window := fmt.Sprintf("%dms", tb.Sub(ta).Milliseconds()+1)
	rates := p.query(`sum by (thread_group) (rate(ctxtop_thread_group_context_switches_total{group="`+group+`",thread_group=~"pp-ping|pp-pong"}[`+window+`]))`, tb)
	got := map[string]float64{}
	for _, s := range rates {
		got[s.Metric["thread_group"]] = s.Value
	}
	for i, name := range names {
		k := (klog.valueAt(i, tb) - klog.valueAt(i, ta)) / tb.Sub(ta).Seconds()
		g := got[name]
		if k < 1000 {
			t.Fatalf("%s switched only %.0f times/s: the workload is not running", name, k)
		}
		if math.Abs(g-k) > 0.1*k {
			t.Errorf("%s: Prometheus rate() %.0f/s, the kernel's counters %.0f/s over the same %s: more than 10%% apart", name, g, k, window)
		} else {
			t.Logf("%s: Prometheus rate() %.0f/s, kernel %.0f/s over %s (%+.2f%%)", name, g, k, window, 100*(g-k)/k)
		}
	}
	t1 = tb

	// The process group is the sum of its thread groups, scrape by scrape.
	proc := p.query(`sum(ctxtop_process_context_switches_total{group="`+group+`"})`, t1)
	threads := p.query(`sum(ctxtop_thread_group_context_switches_total{group="`+group+`"})`, t1)
	if len(proc) != 1 || len(threads) != 1 || proc[0].Value != threads[0].Value || proc[0].Value == 0 {
		t.Errorf("process group %v, sum of its thread groups %v: want equal and non-zero", proc, threads)
	}
	procRate := p.query(`sum(rate(ctxtop_process_context_switches_total{group="`+group+`"}[`+window+`]))`, t1)
	sumRate := p.query(`sum(rate(ctxtop_thread_group_context_switches_total{group="`+group+`"}[`+window+`]))`, t1)
	if len(procRate) != 1 || len(sumRate) != 1 || math.Abs(procRate[0].Value-sumRate[0].Value) > 1e-6*procRate[0].Value {
		t.Errorf("process rate %v, sum of thread-group rates %v: want equal", procRate, sumRate)
	}

	t.Run("rules", func(t *testing.T) { checkRules(t, p) })
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, p, addr, group) })
}

type ruleFile struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Record, Alert, Expr string
		}
	}
}

func checkRules(t *testing.T, p *prom) {
	for _, file := range []string{"ctxtop.rules.yml", "ctxtop.alerts.yml"} {
		b, err := os.ReadFile(filepath.Join(deployDir(), "prometheus", file))
		if err != nil {
			t.Fatal(err)
		}
		var rf ruleFile
		if err := yaml.Unmarshal(b, &rf); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		n := 0
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				n++
				expr := r.Expr
				name := r.Record
				if r.Alert != "" {
					// An alert's condition holds only in trouble; with
					// its comparisons made bool it returns every series it
					// looks at, which a wrong name or label would not.
					expr, name = boolComparisons(expr), r.Alert
				}
				if s := p.query(expr, time.Time{}); len(s) == 0 {
					t.Errorf("%s: %s returns no data:\n%s", file, name, expr)
				}
				if r.Record != "" {
					if s := p.query(r.Record, time.Time{}); len(s) == 0 {
						t.Errorf("%s: Prometheus has not recorded %s", file, r.Record)
					}
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no rules", file)
		}
	}
}

// boolComparisons adds the bool modifier to every comparison outside
// braces and strings: "a > 0.5 and b >= 100" becomes
// "a > bool 0.5 and b >= bool 100".
func boolComparisons(expr string) string {
	var b strings.Builder
	depth := 0
	var quote byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		b.WriteByte(c)
		switch {
		case quote != 0:
			if c == '\\' && i+1 < len(expr) {
				i++
				b.WriteByte(expr[i])
			} else if c == quote {
				quote = 0
			}
			continue
		case c == '"' || c == '\'' || c == '`':
			quote = c
			continue
		case c == '{':
			depth++
			continue
		case c == '}':
			depth--
			continue
		}
		if depth > 0 {
			continue
		}
		op := false
		switch c {
		case '>', '<':
			op = true
			if i+1 < len(expr) && expr[i+1] == '=' {
				i++
				b.WriteByte('=')
			}
		case '=', '!':
			if i+1 < len(expr) && expr[i+1] == '=' {
				op = true
				i++
				b.WriteByte('=')
			}
		}
		if op && !strings.HasPrefix(strings.TrimLeft(expr[i+1:], " "), "bool") {
			b.WriteString(" bool")
		}
	}
	return b.String()
}

func TestBoolComparisons(t *testing.T) {
	for in, want := range map[string]string{
		`a > 0.5 and b >= 100`:               `a > bool 0.5 and b >= bool 100`,
		`x{a!="b",c=~"d>e"} == 1`:            `x{a!="b",c=~"d>e"} == bool 1`,
		`x < bool 3`:                         `x < bool 3`,
		`rate(x[5m]) <= 2 * y != 0`:          `rate(x[5m]) <= bool 2 * y != bool 0`,
		`label_replace(x, "a", ">", "", "")`: `label_replace(x, "a", ">", "", "")`,
	} {
		if got := boolComparisons(in); got != want {
			t.Errorf("boolComparisons(%q) = %q, want %q", in, got, want)
		}
	}
}

var labelValuesRe = regexp.MustCompile(`^label_values\((.*),\s*\w+\)$`)

func checkDashboard(t *testing.T, p *prom, instance, group string) {
	d := loadDashboard(t)
	subst := strings.NewReplacer("$__rate_interval", "10s", "$instance", instance, "$group", group)
	n := 0
	for _, panel := range d.Panels {
		for _, tg := range panel.Targets {
			n++
			expr := subst.Replace(tg.Expr)
			if s := p.query(expr, time.Time{}); len(s) == 0 {
				t.Errorf("panel %q: no data for\n%s", panel.Title, expr)
			}
		}
	}
	if n == 0 {
		t.Fatal("the dashboard has no queries")
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		var q struct{ Query string }
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Fatalf("variable %s: %v", v.Name, err)
		}
		m := labelValuesRe.FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		if p.series(subst.Replace(m[1])) == 0 {
			t.Errorf("variable %s: no series match %s", v.Name, m[1])
		}
	}
}
