package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// scrapeSeries fetches addr's /metrics as plain text and returns each
// series' value by its name and labels as written (`name{a="b"}`), with
// when the scrape was answered.
func scrapeSeries(t *testing.T, addr string) (map[string]float64, time.Time) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	at := time.Now()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %v %s\n%s", err, resp.Status, body)
	}
	m := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape: %q: %v", line, err)
		}
		m[line[:i]] = v
	}
	return m, at
}

// TestExporterAgreesWithMonitor runs one steady workload, two processes
// named worker-1 and worker-2 (as a service started once per shard is),
// each with three threads worker-1..3 that wake every millisecond, and
// looks at it at the same time through the model (batch JSON, what the
// monitor shows) and a real scrape of ctxtop serve. Both must group the
// processes alike (the monitor's g: one group worker-*), count the same hot
// threads in it, and agree on its switch rate; the scrape's rate is over a
// longer interval around the JSON's, so within a tolerance.
func TestExporterAgreesWithMonitor(t *testing.T) {
	bin := testutil.Binary(t)
	var pids []string
	for _, name := range []string{"worker-1", "worker-2"} {
		pids = append(pids, strconv.Itoa(testutil.StartCWorkers(t, name, 3, time.Millisecond)))
	}
	// 200/s: the workers switch about 1,000 times a second each, so they
	// stay hot on a loaded host, and their idle main threads never are.
	const hot = "200"
	p := strings.Join(pids, ",")
	addr := testutil.StartServe(t, "--web.listen-address=127.0.0.1:0", "--hot", hot, "-p", p)

	before, t0 := scrapeSeries(t, addr)
	out, err := exec.Command(bin, "-b", "-o", "json", "-d", "1", "-n", "1", "--hot", hot, "-p", p).Output()
	if err != nil {
		t.Fatalf("ctxtop -b -o json: %v", err)
	}
	after, t1 := scrapeSeries(t, addr)

	var snap struct {
		Processes []struct {
			PID     int     `json:"pid"`
			Comm    string  `json:"comm"`
			Threads int     `json:"threads"`
			Cswch   float64 `json:"cswch_per_s"`
			Nvcswch float64 `json:"nvcswch_per_s"`
		} `json:"processes"`
		Threads []struct {
			PID int  `json:"pid"`
			Hot bool `json:"hot"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(out, &snap); err != nil {
		t.Fatalf("batch JSON: %v\n%s", err, out)
	}
	// The monitor's view, grouped by its rule: hot threads, live threads
	// and switches/s per group.
	type view struct {
		Hot, Threads int
		Rate         float64
	}
	monitor := map[string]view{}
	groupOf := map[int]string{}
	for _, pr := range snap.Processes {
		g := model.ProcessGroup(pr.Comm)
		groupOf[pr.PID] = g
		v := monitor[g]
		v.Threads += pr.Threads
		v.Rate += pr.Cswch + pr.Nvcswch
		monitor[g] = v
	}
	for _, th := range snap.Threads {
		if g, ok := groupOf[th.PID]; ok && th.Hot {
			v := monitor[g]
			v.Hot++
			monitor[g] = v
		}
	}
	if len(snap.Processes) != 2 || monitor["worker-*"].Hot != 6 {
		t.Fatalf("batch JSON does not show the workload as one group of 6 hot threads: %+v\n%s", monitor, out)
	}

	exporter := map[string]view{}
	secs := t1.Sub(t0).Seconds()
	for k, v := range after {
		group, ok := strings.CutPrefix(k, `ctxtop_process_hot_threads{group="`)
		if !ok {
			continue
		}
		g := strings.TrimSuffix(group, `"}`)
		sw := func(m map[string]float64) float64 {
			return m[fmt.Sprintf(`ctxtop_process_context_switches_total{group=%q,type="voluntary"}`, g)] +
				m[fmt.Sprintf(`ctxtop_process_context_switches_total{group=%q,type="involuntary"}`, g)]
		}
		exporter[g] = view{
			Hot:     int(v),
			Threads: int(after[fmt.Sprintf(`ctxtop_process_threads{group=%q}`, g)]),
			Rate:    (sw(after) - sw(before)) / secs,
		}
	}
	// Grouping and counts exactly; rates within 25%: the scrape's interval
	// holds the JSON's second but is longer.
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 0.25*math.Max(a, b) })
	if diff := cmp.Diff(monitor, exporter, approx); diff != "" {
		t.Errorf("per group, monitor (batch JSON) vs exporter (scrape over %.1f s) (-want +got):\n%s", secs, diff)
	}
}
