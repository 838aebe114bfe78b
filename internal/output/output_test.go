package output

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	test, _, _ := strings.Cut(t.Name(), "/")
	path := filepath.Join("testdata", test, name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got)\n%s", path, diff)
	}
}

func snapshot() *model.Snapshot {
	return &model.Snapshot{
		Time:     time.Date(2026, 11, 22, 10, 15, 30, 250e6, time.UTC),
		Interval: time.Second,
		System: model.SystemRates{ContextSwitchesPerSec: 212345.5, InterruptsPerSec: 4567.25, ReschedIPIsPerSec: 98765,
			ProcsRunning: 3, ProcsBlocked: 1, CPUs: 2, HasPSI: true, PSICPUSomeAvg10: 12.5, LoadAvg: [3]float64{2.5, 1.25, 0.5}},
		UnattributedPerSec: 16332.54,
		Threads: []model.ThreadRates{
			{PID: 4100, TID: 4102, Comm: "ping-futex", VoluntaryPerSec: 98000.456, InvoluntaryPerSec: 12.5, CPUPercent: 61.25, WaitPercent: 3.5,
				CPUsAllowed: "0", Pinned: true, Hot: true, Why: model.Why{Kind: model.Blocking, HasWait: true, Wait: 4}},
			{PID: 4100, TID: 4103, Comm: "pong-futex", VoluntaryPerSec: 97990, InvoluntaryPerSec: 10, CPUPercent: 60, WaitPercent: 2,
				CPUsAllowed: "0", Pinned: true, Hot: true, Why: model.Why{Kind: model.Blocking, HasWait: true, Wait: 2, On: []model.WaitShare{{Reason: "futex", Share: 0.8}, {Reason: "pipe", Share: 0.2}}},
				WaitOn: []model.WaitShare{{Reason: "futex wait", Share: 0.8}, {Reason: "pipe read", Share: 0.2}}},
			{PID: 812, TID: 830, Comm: "a-very-long-thread-name", VoluntaryPerSec: 10, InvoluntaryPerSec: 1500, CPUPercent: 99.5, WaitPercent: 35,
				PerSec: [model.NumCounters]float64{model.Migrations: 212.345}, CPUsAllowed: "0-1", Hot: true, Why: model.Why{Kind: model.Preempted, HasWait: true, Wait: 35}},
			{PID: 1, TID: 1, Comm: "systemd", VoluntaryPerSec: 0.5, CPUsAllowed: "0-1"},
		},
		Processes: []model.ProcessRates{
			{PID: 4100, Comm: "ctxtop", Threads: 7, VoluntaryPerSec: 195990.456, InvoluntaryPerSec: 22.5, CPUPercent: 121.25, WaitPercent: 5.5, Hot: true, Why: model.Why{Kind: model.Blocking, HasWait: true, Wait: 6}},
			{PID: 812, Comm: "java", Threads: 40, VoluntaryPerSec: 10, InvoluntaryPerSec: 1500, CPUPercent: 99.5, WaitPercent: 35, Hot: true, Why: model.Why{Kind: model.Preempted, HasWait: true, Wait: 35}},
			{PID: 1, Comm: "systemd", Threads: 1, VoluntaryPerSec: 0.5},
		},
		Cgroups: []model.CgroupRates{
			{Path: "/kubepods/burstable/pod1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a/3f1c2b4d5e6f7a8b", Name: "pod 1d2e3f4a-5b6c-7d8e-9f0a-1b2c3d4e5f6a (burstable) 3f1c2b4d5e6f",
				Processes: 1, Threads: 40, VoluntaryPerSec: 10, InvoluntaryPerSec: 1500, CPUPercent: 99.5,
				HasThrottling: true, ThrottledPercent: 43.25, ThrottledMsPerSec: 412.5, LimitCPUs: 1, Hot: true, Why: model.Why{Kind: model.Throttled, Throttled: 43}},
			{Path: "/system.slice/ctxtop.service", Name: "ctxtop.service", Processes: 2, Threads: 8, VoluntaryPerSec: 196000.956, InvoluntaryPerSec: 22.5,
				CPUPercent: 121.25, Hot: true, Why: model.Why{Kind: model.Blocking}},
		},
		Spike:      model.Spike{Active: true, Baseline: 60412.25, Factor: 3.5, Window: 5 * time.Minute},
		Tasks:      120,
		Unreadable: 2,
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		edit func(*model.Snapshot)
	}{
		{"threads", Options{}, nil},
		{"top2", Options{Top: 2}, nil},
		{"processes", Options{Processes: true}, nil},
		{"processes-top1", Options{Processes: true, Top: 1}, nil},
		{"cgroups", Options{Cgroups: true}, nil},
		{"cgroups-top1", Options{Cgroups: true, Top: 1}, nil},
		{"cells", Options{}, func(s *model.Snapshot) {
			// A name in UTF-8 longer than the column, one with a control
			// character, a CPU list longer than its column, and a cold row
			// that carries a stale reason.
			s.Threads[0].Comm = "wörker-ñame-übertrieben"
			s.Threads[1].Comm = "tab\there"
			s.Threads[2].CPUsAllowed = "0-3,8-11,16-19"
			s.Threads[3].Why = model.Why{Kind: model.Preempted, HasWait: true}
		}},
		{"wide", Options{}, func(s *model.Snapshot) {
			// Two cells per CJK character or emoji: a name of 9 CJK
			// characters is cut to 8 (16 cells), one of 1+8 to 1+7 and a
			// space. Names that did not come through the sampler are
			// sanitized all the same.
			s.Threads[0].Comm = "数据库连接池线程池"
			s.Threads[1].Comm = "a数据库连接池线程"
			s.Threads[2].Comm = "🔥hot\x1b[31m"
			s.Threads[3].Comm = "\u202eevil\x9b"
			s.Threads[3].CPUsAllowed = "\x1b]0;x\x07"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewText(&b, tc.opts)
			s := snapshot()
			if tc.edit != nil {
				tc.edit(s)
			}
			if err := w.Write(s); err != nil {
				t.Fatal(err)
			}
			s.Spike, s.Unreadable, s.System.HasPSI = model.Spike{}, 0, false
			if err := w.Write(s); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

// TestTextAlignsInCells: whatever the name, every row's TOTAL/s ends in the
// same terminal cell as the header's.
func TestTextAlignsInCells(t *testing.T) {
	for _, name := range []string{"数据库连接池线程池", "a数据库连接池线程", "🔥🔥🔥", "e\u0301te\u0301", "\x1b[2J\x1b[H", "ｆｕｌｌｗｉｄｔｈ-name"} {
		var b bytes.Buffer
		s := snapshot()
		s.Threads[0].Comm = name
		if err := NewText(&b, Options{}).Write(s); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		want := ansi.StringWidth(lines[1][:strings.Index(lines[1], "TOTAL/s")+len("TOTAL/s")])
		row := lines[2]
		end := strings.Index(row, "98012.96") + len("98012.96")
		if got := ansi.StringWidth(row[:end]); got != want {
			t.Errorf("name %q: TOTAL/s ends at cell %d, header at %d:\n%s\n%s", name, got, want, lines[1], row)
		}
	}
}

// notNumbers is a Snapshot whose every rate is NaN or infinite: the model
// produces none, but a report must not print one or fail on one.
func notNumbers() *model.Snapshot {
	s := snapshot()
	nan, inf := math.NaN(), math.Inf(1)
	s.System.ContextSwitchesPerSec, s.System.InterruptsPerSec, s.System.ReschedIPIsPerSec = nan, inf, nan
	s.System.PSICPUSomeAvg10, s.System.LoadAvg = nan, [3]float64{nan, inf, -inf}
	for i := range s.Threads {
		th := &s.Threads[i]
		th.VoluntaryPerSec, th.InvoluntaryPerSec, th.CPUPercent, th.WaitPercent = nan, inf, nan, -inf
	}
	for i := range s.Processes {
		p := &s.Processes[i]
		p.VoluntaryPerSec, p.InvoluntaryPerSec, p.CPUPercent, p.WaitPercent = inf, nan, nan, nan
	}
	return s
}

func TestNoNaNInOutput(t *testing.T) {
	for _, opts := range []Options{{}, {Processes: true}} {
		var b bytes.Buffer
		if err := NewText(&b, opts).Write(notNumbers()); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Errorf("text report with %+v prints a non-number:\n%s", opts, out)
		}
	}
	var b bytes.Buffer
	if err := NewJSON(&b, Options{}).Write(notNumbers()); err != nil {
		t.Fatalf("JSON report failed on non-numbers: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatalf("JSON report does not decode: %v\n%s", err, b.String())
	}
	if out := b.String(); strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
		t.Errorf("JSON report holds a non-number:\n%s", out)
	}
}

func TestJSONTopAndEscaping(t *testing.T) {
	for _, tc := range []struct {
		top                int
		threads, processes int
	}{{0, 4, 3}, {1, 1, 1}, {2, 2, 2}, {10, 4, 3}} {
		var b bytes.Buffer
		s := snapshot()
		s.Threads[3].Comm = "a<b>&c"
		if err := NewJSON(&b, Options{Top: tc.top}).Write(s); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Threads   []map[string]any `json:"threads"`
			Processes []map[string]any `json:"processes"`
		}
		if err := json.Unmarshal(b.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Threads) != tc.threads || len(r.Processes) != tc.processes {
			t.Errorf("top %d: %d threads and %d processes, want %d and %d", tc.top, len(r.Threads), len(r.Processes), tc.threads, tc.processes)
		}
		// Rows keep the Snapshot's order: the busiest first.
		if len(r.Threads) > 0 && r.Threads[0]["tid"] != float64(4102) {
			t.Errorf("top %d: first thread %v, want 4102", tc.top, r.Threads[0]["tid"])
		}
		if tc.top == 0 && !strings.Contains(b.String(), `"comm":"a<b>&c"`) {
			t.Errorf("comm escaped for HTML: %s", b.String())
		}
	}
}

func TestJSON(t *testing.T) {
	var b bytes.Buffer
	w := NewJSON(&b, Options{Top: 3})
	s := snapshot()
	if err := w.Write(s); err != nil {
		t.Fatal(err)
	}
	s.System.HasPSI = false
	s.Threads, s.Processes, s.Cgroups = nil, nil, nil
	// Too little history yet for a baseline.
	s.Spike = model.Spike{}
	if err := w.Write(s); err != nil {
		t.Fatal(err)
	}
	golden(t, "report", b.Bytes())

	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per report, got %d", len(lines))
	}
	keys := func(m map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"cgroups", "interval_s", "processes", "system", "threads", "time"}, keys(first)); diff != "" {
		t.Errorf("top-level keys (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"baseline_cs_per_s", "cpus", "cs_per_s", "intr_per_s", "procs_blocked", "procs_running", "psi_cpu_some_avg10", "resched_ipi_per_s", "spike", "unattributed_cs_per_s", "unreadable_tasks"}, keys(first["system"].(map[string]any))); diff != "" {
		t.Errorf("system keys (-want +got)\n%s", diff)
	}
	sys1, sys2 := first["system"].(map[string]any), second["system"].(map[string]any)
	if diff := cmp.Diff([]any{"3.5× the 5-min baseline 60,412 (median)", 60412.25}, []any{sys1["spike"], sys1["baseline_cs_per_s"]}); diff != "" {
		t.Errorf("spike and baseline (-want +got)\n%s", diff)
	}
	if _, ok := sys2["psi_cpu_some_avg10"]; ok {
		t.Error("psi_cpu_some_avg10 present on a kernel without PSI")
	}
	if b, ok := sys2["baseline_cs_per_s"]; !ok || b != nil {
		t.Errorf("baseline_cs_per_s with no history: %v (present %v), want null", b, ok)
	}
	if _, ok := sys2["spike"]; ok {
		t.Error("spike present when cs/s is no spike")
	}
	if diff := cmp.Diff([]string{"comm", "cpu_pct", "cswch_per_s", "nvcswch_per_s", "pid", "threads"}, keys(first["processes"].([]any)[0].(map[string]any))); diff != "" {
		t.Errorf("process keys (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff([]string{"comm", "cpu_pct", "cpus_allowed", "cswch_per_s", "hot", "migrations_per_s", "nvcswch_per_s", "pid", "reason", "tid", "wait_pct", "why"}, keys(first["threads"].([]any)[0].(map[string]any))); diff != "" {
		t.Errorf("thread keys (-want +got)\n%s", diff)
	}
	// WHY as data: the parts of "blocking: futex 80%, pipe 20%", and no
	// object for a cold row.
	wantWhy := map[string]any{"kind": "blocking", "wait_pct": 2.0,
		"on": []any{map[string]any{"reason": "futex", "share": 0.8}, map[string]any{"reason": "pipe", "share": 0.2}}}
	if diff := cmp.Diff(wantWhy, first["threads"].([]any)[1].(map[string]any)["why"]); diff != "" {
		t.Errorf("why (-want +got)\n%s", diff)
	}
	for _, line := range []map[string]any{first, second} {
		for _, th := range line["threads"].([]any) {
			th := th.(map[string]any)
			if _, ok := th["why"]; ok != th["hot"].(bool) {
				t.Errorf("thread %v: hot %v, why %v", th["tid"], th["hot"], th["why"])
			}
		}
	}
	if diff := cmp.Diff(map[string]any{"futex wait": 0.8, "pipe read": 0.2}, first["threads"].([]any)[1].(map[string]any)["wait_on"]); diff != "" {
		t.Errorf("wait_on (-want +got)\n%s", diff)
	}
	cgs := first["cgroups"].([]any)
	wantCgroupKeys := []string{"cgroup", "cpu_pct", "cswch_per_s", "name", "nvcswch_per_s", "processes", "threads", "throttled_ms_per_s", "throttled_pct"}
	for i, c := range cgs {
		if diff := cmp.Diff(wantCgroupKeys, keys(c.(map[string]any))); diff != "" {
			t.Errorf("cgroup %d keys (-want +got)\n%s", i, diff)
		}
	}
	if len(cgs) != 2 || cgs[0].(map[string]any)["throttled_pct"] != 43.25 || cgs[1].(map[string]any)["throttled_pct"] != nil {
		t.Errorf("cgroups: want throttled_pct 43.25, then null for unknown: %v", cgs)
	}
	if c, ok := second["cgroups"].([]any); !ok || len(c) != 0 {
		t.Errorf("no cgroups must be [], got %v", second["cgroups"])
	}
	if n := len(first["threads"].([]any)); n != 3 {
		t.Errorf("--top 3 gave %d threads", n)
	}
	if th, ok := second["threads"].([]any); !ok || len(th) != 0 {
		t.Errorf("no threads must be [], got %v", second["threads"])
	}
}

// The switches no row holds get a row of their own, so the rows add up to
// the system line.
func TestTextShowsUnattributed(t *testing.T) {
	for _, procs := range []bool{false, true} {
		var b bytes.Buffer
		if err := NewText(&b, Options{Processes: procs}).Write(snapshot()); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		last := lines[len(lines)-1]
		for _, want := range []string{"(no thread row)", "16332.54", "new/exited tasks, idle"} {
			if !strings.Contains(last, want) {
				t.Errorf("processes=%v: last line %q lacks %q", procs, last, want)
			}
		}
	}
}

// With host facts, each JSON line carries them as "host", uptime at the
// report's time; the other keys stay as they were.
func TestJSONHost(t *testing.T) {
	s := snapshot()
	h := hostinfo.Facts{Hostname: "db-7", Kernel: "6.18.0", CPUModel: "AMD EPYC", CPUs: 2, BootTime: s.Time.Add(-90 * time.Second), MemTotal: 8 << 30}
	var b bytes.Buffer
	if err := NewJSON(&b, Options{Host: &h}).Write(s); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Host map[string]any `json:"host"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"hostname": "db-7", "kernel": "6.18.0", "cpu_model": "AMD EPYC", "cpus": 2.0, "mem_total_bytes": float64(8 << 30), "uptime_s": 90.0}
	if diff := cmp.Diff(want, got.Host); diff != "" {
		t.Errorf("host (-want +got)\n%s", diff)
	}
}

// A wait the kernel reported late is in the JSON row, in ms, and left out
// of the rows that have none.
func TestJSONEarlierWait(t *testing.T) {
	var b bytes.Buffer
	s := snapshot()
	s.Threads[0].EarlierWait = 1250 * time.Millisecond
	s.Threads[1].EarlierWait = 0
	if err := NewJSON(&b, Options{}).Write(s); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Threads []map[string]any `json:"threads"`
	}
	if err := json.Unmarshal(b.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(1250.0, r.Threads[0]["earlier_wait_ms"]); diff != "" {
		t.Errorf("earlier_wait_ms (-want +got)\n%s", diff)
	}
	if v, ok := r.Threads[1]["earlier_wait_ms"]; ok {
		t.Errorf("earlier_wait_ms = %v on a row with none, want it left out", v)
	}
}
