package exporter

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/ctxtop/ctxtop/internal/exposition"
	"github.com/ctxtop/ctxtop/internal/logfmt"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/sampler"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// needTool returns the path of an external program the test needs. CI
// installs them (.ci/run), so there a missing one fails the test; elsewhere
// it skips.
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

// sampling is a Config whose passes sample with sc.
func sampling(sc sampler.Config) Config { return Config{Source: pipeline.ScrapeConfig{Sampler: sc}} }

func fixtureServer(t *testing.T, cfg Config) (*Exporter, *httptest.Server) {
	t.Helper()
	if cfg.Source.Sampler.Root == "" {
		cfg.Source.Sampler.Root = filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	h, err := Handler(e, HandlerOptions{Version: "test", Logger: logfmt.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return e, srv
}

func get(t *testing.T, url, accept string) (body []byte, contentType string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	return body, resp.Header.Get("Content-Type")
}

func parse(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("expfmt cannot parse the exposition: %v\n%s", err, body)
	}
	return fams
}

// gather collects e's metrics and reads them back through expfmt's parser.
func gather(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	ms, err := e.Collect(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := exposition.Write(&b, exposition.Text, ms); err != nil {
		t.Fatal(err)
	}
	return parse(t, b.Bytes())
}

// value finds the sample of family name whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(want); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == want[i] && lp.GetValue() == want[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

// checker collects expected series values with check, and what the
// scrape fams served for the same series, keyed alike for one cmp.Diff.
func checker(fams map[string]*dto.MetricFamily) (want, got map[string]float64, check func(v float64, name string, labels ...string)) {
	want, got = map[string]float64{}, map[string]float64{}
	check = func(v float64, name string, labels ...string) {
		key := name + "{" + strings.Join(labels, ",") + "}"
		want[key] = v
		if g, ok := value(fams, name, labels...); ok {
			got[key] = g
		}
	}
	return want, got, check
}

func TestExpositionFromFixture(t *testing.T) {
	_, srv := fixtureServer(t, Config{})
	body, ctype := get(t, srv.URL+"/metrics", "")
	if !strings.HasPrefix(ctype, "text/plain") {
		t.Errorf("Content-Type %q without an OpenMetrics Accept, want text/plain", ctype)
	}
	fams := parse(t, body)

	want, got, check := checker(fams)
	// Figures from testdata/proc: PID 100 app-server with pool-1-thread-1
	// and -2; see testdata/proc/README.md.
	check(2727877, "ctxtop_context_switches_total")
	check(1188409, "ctxtop_interrupts_total")
	check(63696, "ctxtop_rescheduling_ipis_total", "cpu", "0")
	check(72716, "ctxtop_rescheduling_ipis_total", "cpu", "1")
	check(2, "ctxtop_cpus")
	check(1, "ctxtop_procs_running")
	check(0, "ctxtop_procs_blocked")
	check(64.211273, "ctxtop_pressure_cpu_some_seconds_total")
	check(49+900+900, "ctxtop_process_context_switches_total", "group", "app-server", "type", "voluntary")
	check(5+1+1, "ctxtop_process_context_switches_total", "group", "app-server", "type", "involuntary")
	check(float64(85741835+10352234+11170251)/1e9, "ctxtop_process_cpu_seconds_total", "group", "app-server")
	check(float64(4496559+2657238+571149)/1e9, "ctxtop_process_run_queue_wait_seconds_total", "group", "app-server")
	check(3, "ctxtop_process_threads", "group", "app-server")
	check(1800, "ctxtop_thread_group_context_switches_total", "group", "app-server", "thread_group", "pool-*-thread-*", "type", "voluntary")
	check(49, "ctxtop_thread_group_context_switches_total", "group", "app-server", "thread_group", "app-server", "type", "voluntary")
	check(2, "ctxtop_thread_group_threads", "group", "app-server", "thread_group", "pool-*-thread-*")
	check(1, "ctxtop_exporter_samples_total")
	check(1, "ctxtop_exporter_tasks_unreadable") // 301's status is malformed
	check(0, "ctxtop_exporter_groups_dropped", "level", "process")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}

	for name, f := range fams {
		if f.GetHelp() == "" {
			t.Errorf("%s has no HELP", name)
		}
		if !strings.HasPrefix(name, "ctxtop_") && !strings.HasPrefix(name, "promhttp_") {
			t.Errorf("%s lacks the ctxtop_ prefix", name)
		}
		isTotal := strings.HasSuffix(name, "_total")
		if (f.GetType() == dto.MetricType_COUNTER) != isTotal {
			t.Errorf("%s is a %v: counters, and only counters, end in _total", name, f.GetType())
		}
		if strings.HasPrefix(name, "ctxtop_") && !strings.HasPrefix(name, "ctxtop_exporter") && !strings.Contains(f.GetHelp(), "/proc/") {
			t.Errorf("%s: HELP does not name its /proc source: %q", name, f.GetHelp())
		}
	}

	promtool := needTool(t, "promtool")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestNamesThatCleanUpAlikeShareASeries: raw names from /proc become
// label values as the sampler cleans them, and names that clean up alike
// share one series rather than making the scrape fail on a duplicate.
func TestNamesThatCleanUpAlikeShareASeries(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proc")
	if err := os.CopyFS(root, os.DirFS(filepath.Join(testutil.RepoRoot(), "testdata", "proc"))); err != nil {
		t.Fatal(err)
	}
	// The sampler takes a thread's name from stat, raw as comm holds it.
	for task, comm := range map[string]string{"100/task/100": "\xff", "200/task/200": "x\x01", "300/task/300": "x\x02", "400/task/400": "other"} {
		p := filepath.Join(root, task, "stat")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		stat := string(b)
		stat = stat[:strings.IndexByte(stat, '(')+1] + comm + stat[strings.LastIndexByte(stat, ')'):]
		if err := os.WriteFile(p, []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, srv := fixtureServer(t, sampling(sampler.Config{Root: root}))
	body, _ := get(t, srv.URL+"/metrics", "")
	fams := parse(t, body)
	want, got, check := checker(fams)
	const switches = "ctxtop_process_context_switches_total"
	const threadSwitches = "ctxtop_thread_group_context_switches_total"
	check(49+49, switches, "group", "x?", "type", "voluntary")
	check(49+49, threadSwitches, "group", "x?", "thread_group", "x?", "type", "voluntary")
	check(49+903, switches, "group", "'other'", "type", "voluntary")
	check(49, threadSwitches, "group", "'other'", "thread_group", "'other'", "type", "voluntary")
	check(49+900+900, switches, "group", "?", "type", "voluntary")
	check(49, threadSwitches, "group", "?", "thread_group", "?", "type", "voluntary")
	check(0, "ctxtop_exporter_groups_dropped", "level", "process")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exposition (-want +got):\n%s", diff)
	}
	if _, ok := value(fams, switches, "group", "other"); ok {
		t.Error("a process named other went into the overflow series")
	}
}

func TestOpenMetricsWhenAsked(t *testing.T) {
	_, srv := fixtureServer(t, Config{})
	body, ctype := get(t, srv.URL+"/metrics", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	if !strings.HasPrefix(ctype, "application/openmetrics-text") {
		t.Errorf("Content-Type %q, want application/openmetrics-text", ctype)
	}
	for _, line := range []string{"# TYPE ctxtop_context_switches counter\n", "ctxtop_context_switches_total 2.727877e+06\n"} {
		if !bytes.Contains(body, []byte(line)) {
			t.Errorf("OpenMetrics body lacks %q", line)
		}
	}
	if !bytes.HasSuffix(body, []byte("# EOF\n")) {
		t.Errorf("OpenMetrics body does not end with # EOF")
	}
}

func TestLandingPageLinksToMetrics(t *testing.T) {
	_, srv := fixtureServer(t, Config{})
	body, ctype := get(t, srv.URL+"/", "")
	if !strings.HasPrefix(ctype, "text/html") || !bytes.Contains(body, []byte(`href="/metrics"`)) {
		t.Errorf("landing page (%s) has no link to /metrics:\n%s", ctype, body)
	}
}

// Scrapes that arrive together share one pass over /proc; one after the cache
// window takes a new one.
func TestConcurrentScrapesShareOneSample(t *testing.T) {
	e, srv := fixtureServer(t, Config{})
	var wg sync.WaitGroup
	bodies := make([][]byte, 4)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies[i], _ = get(t, srv.URL+"/metrics", "")
		}()
	}
	wg.Wait()
	if n := e.Samples(); n != 1 {
		t.Errorf("4 concurrent scrapes took %d samples, want 1", n)
	}
	time.Sleep(CacheWindow + 50*time.Millisecond)
	get(t, srv.URL+"/metrics", "")
	if n := e.Samples(); n != 2 {
		t.Errorf("a scrape after the cache window: %d samples in all, want 2", n)
	}
}

func TestBadConfig(t *testing.T) {
	for _, cfg := range []Config{{GroupBy: "tid"}, {MaxGroups: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted it", cfg)
		}
	}
}

// Prometheus asks for gzip; the body must come compressed and whole.
func TestGzipWhenAsked(t *testing.T) {
	_, srv := fixtureServer(t, Config{})
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", ce)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := value(parse(t, body), "ctxtop_context_switches_total"); !ok || v != 2727877 {
		t.Errorf("gzipped body: ctxtop_context_switches_total = %v (found %v), want 2727877", v, ok)
	}
}

func TestTelemetryPath(t *testing.T) {
	e, err := New(sampling(sampler.Config{Root: filepath.Join(testutil.RepoRoot(), "testdata", "proc")}))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	h, err := Handler(e, HandlerOptions{TelemetryPath: "/ctxtop/metrics", Logger: logfmt.New(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	if body, _ := get(t, srv.URL+"/ctxtop/metrics", ""); !bytes.Contains(body, []byte("ctxtop_context_switches_total")) {
		t.Errorf("no metrics at the telemetry path")
	}
	if body, _ := get(t, srv.URL+"/", ""); !bytes.Contains(body, []byte(`href="/ctxtop/metrics"`)) {
		t.Errorf("landing page does not link to the telemetry path:\n%s", body)
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics with another telemetry path: %s, want 404", resp.Status)
	}
}

// Only GET and HEAD read anything here; a POST or DELETE is a client's
// mistake and gets 405 with the methods it may use, on every path.
func TestMethodsOtherThanGetAreRefused(t *testing.T) {
	_, srv := fixtureServer(t, Config{})
	for _, path := range []string{"/metrics", "/", "/nowhere"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
			req, err := http.NewRequest(method, srv.URL+path, strings.NewReader("x"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want %d", method, path, resp.StatusCode, http.StatusMethodNotAllowed)
			}
			if allow := resp.Header.Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q, want %q", method, path, allow, "GET, HEAD")
			}
		}
	}
	req, err := http.NewRequest(http.MethodHead, srv.URL+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD /metrics: status %d, want 200", resp.StatusCode)
	}
}

// The handler's own series are promhttp's, as before: a scrape sees itself
// in flight and the scrapes before it counted by status code; name[] picks
// families.
func TestHandlerSeriesAndNameFilter(t *testing.T) {
	_, srv := fixtureServer(t, Config{})
	get(t, srv.URL+"/metrics", "")
	fams := parse(t, func() []byte { b, _ := get(t, srv.URL+"/metrics", ""); return b }())
	want, got, check := checker(fams)
	check(1, "promhttp_metric_handler_requests_total", "code", "200")
	check(0, "promhttp_metric_handler_requests_total", "code", "503")
	check(1, "promhttp_metric_handler_requests_in_flight")
	check(0, "promhttp_metric_handler_errors_total", "cause", "gathering")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("handler series (-want +got):\n%s", diff)
	}
	body, _ := get(t, srv.URL+"/metrics?name[]=ctxtop_cpus&name[]=ctxtop_procs_running", "")
	var names []string
	for name := range parse(t, body) {
		names = append(names, name)
	}
	slices.Sort(names)
	if diff := cmp.Diff([]string{"ctxtop_cpus", "ctxtop_procs_running"}, names); diff != "" {
		t.Errorf("families with name[] (-want +got):\n%s", diff)
	}
}

// A scraper that lists gzip with q=0 refuses it, as RFC 9110 has it; one
// that says nothing gets the body plain.
func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                      false,
		"gzip":                  true,
		"identity, gzip;q=0.5":  true,
		"*":                     true,
		"gzip;q=0":              false,
		"gzip; q=0.000":         false,
		"br, deflate":           false,
		"x-gzip-like, identity": false,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}
