package cli_test

import (
	"bytes"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/report/reporttest"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// needChromium is the browser's path; it skips where there is none,
// except under CI, which installs it.
func needChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is missing under CI")
	}
	t.Skip("no chromium")
	return ""
}

// browse opens page from disk in headless Chromium with the network
// off, and returns the DOM after its scripts ran and the console lines
// the browser logged. A probe script added to a copy of the page lists
// every resource the page asked for into the DOM; the page itself is
// unchanged.
func browse(t *testing.T, chromium, page string, extra ...string) (dom, console string) {
	t.Helper()
	src, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := `<script>window.addEventListener('load',function(){var r=performance.getEntriesByType('resource').map(function(e){return e.name});` +
		`document.body.setAttribute('data-resources',String(r.length));document.body.setAttribute('data-resource-names',r.join(' '));` +
		`document.body.setAttribute('data-title',document.title);});</script></body>`
	probed := filepath.Join(t.TempDir(), "probed.html")
	if err := os.WriteFile(probed, bytes.Replace(src, []byte("</body>"), []byte(probe), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
		"--proxy-server=127.0.0.1:9", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, extra...)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(chromium, append(args, "--dump-dom", "file://"+probed)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, stderr.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("chromium did not finish in 90 s\n%s", stderr.String())
	}
	var lines []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, ":CONSOLE(") || strings.Contains(l, "Uncaught") || strings.Contains(l, "Content Security Policy") {
			lines = append(lines, l)
		}
	}
	return stdout.String(), strings.Join(lines, "\n")
}

// checkClean fails on console messages and on any resource request.
func checkClean(t *testing.T, dom, console string) {
	t.Helper()
	if console != "" {
		t.Errorf("the browser's console:\n%s", console)
	}
	m := regexp.MustCompile(`data-resources="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run: no data-resources in the DOM\n%.2000s", dom)
	}
	if m[1] != "0" {
		t.Errorf("the page requested %s resources: %s", m[1], regexp.MustCompile(`data-resource-names="([^"]*)"`).FindStringSubmatch(dom))
	}
}

func TestReportInABrowser(t *testing.T) {
	chromium := needChromium(t)
	bin := testutil.Binary(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "burst.ctxrec")
	samples := reporttest.Burst(90, 50, 56)
	// A hostile name beside the known burst: no script may run from it.
	for i := range samples {
		for j := range samples[i].Tasks {
			if samples[i].Tasks[j].TID == 1012 {
				samples[i].Tasks[j].Comm = `<img src=x onerror="document.title='pwned'">`
			}
		}
	}
	if err := reporttest.Write(rec, reporttest.Header(), samples); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "incident.html")
	if out, err := exec.Command(bin, "report", rec, "-o", page).CombinedOutput(); err != nil {
		t.Fatalf("ctxtop report: %v\n%s", err, out)
	}

	dom, console := browse(t, chromium, page)
	checkClean(t, dom, console)
	// The summary names the spike (its time, from the known burst of
	// samples 50–55 starting at 10:00:00) and the thread that caused it.
	for _, want := range []string{"1 spike", "10:00:50–10:00:56", reporttest.BurstName, "TID 1005"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, "pwned") && !strings.Contains(dom, "document.title='pwned'") || strings.Contains(dom, `data-title="pwned"`) {
		t.Error("a script ran from a thread name")
	}
	if strings.Contains(dom, "<img src=\"x\"") {
		t.Error("a thread name became an element")
	}
	// The scripts ran: the tabs were made.
	if !strings.Contains(dom, `role="tablist"`) {
		t.Error("the flame graphs' tabs were not made: did the script fail?")
	}

	// A screenshot at 1280×800 shows the timeline drawn: its line and its
	// spike band. Beside two busy loops, 5 captures in 213 came out torn:
	// part of the viewport shows a block of some other tile's pixels (seen:
	// a pink block over the chart's lower right, hiding its line on all but
	// 406 of its columns). That is the headless browser's raster under CPU
	// starvation, not the page, so a torn capture is taken again, at most
	// three times, each in a fresh browser; a page that does not draw the
	// line fails all three.
	var line, band int
	for try := 1; try <= 3; try++ {
		line, band = timelinePixels(t, chromium, page, filepath.Join(t.TempDir(), "shot.png"))
		if line >= 800 && band >= 500 {
			break
		}
		t.Logf("screenshot %d: the line on %d columns, the band on %d pixels", try, line, band)
	}
	// The line crosses the plot: most of its 1,110 columns.
	if line < 800 {
		t.Errorf("the timeline's line covers %d columns of the screenshot, want at least 800", line)
	}
	if band < 500 {
		t.Errorf("the spike band covers %d pixels, want at least 500", band)
	}
}

// timelinePixels has chromium capture page at 1280×800 into shot and
// returns how many columns hold the timeline's line colour and how many
// pixels the spike band's.
func timelinePixels(t *testing.T, chromium, page, shot string) (lineColumns, bandPixels int) {
	t.Helper()
	if out, err := exec.Command(chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(), "--hide-scrollbars",
		"--screenshot="+shot, "--window-size=1280,800", "file://"+page).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	near := func(r, g, b uint32, want [3]int) bool {
		c := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
		for i := range c {
			if math.Abs(float64(c[i]-want[i])) > 24 {
				return false
			}
		}
		return true
	}
	line := map[int]bool{}
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if near(r, g, b, [3]int{0x09, 0x69, 0xda}) {
				line[x] = true
			}
			if near(r, g, b, [3]int{0xff, 0xd8, 0xd6}) {
				bandPixels++
			}
		}
	}
	return len(line), bandPixels
}

func TestDiffInABrowser(t *testing.T) {
	chromium := needChromium(t)
	bin := testutil.Binary(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.ctxrec"), filepath.Join(dir, "b.ctxrec")
	if err := reporttest.Write(a, reporttest.Header(), reporttest.Steady(40)); err != nil {
		t.Fatal(err)
	}
	if err := reporttest.Write(b, reporttest.Header(), reporttest.Burst(40, 1, 40)); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "diff", a, b, "-o", "html").Output()
	if err != nil {
		t.Fatalf("ctxtop diff: %v", err)
	}
	page := filepath.Join(dir, "diff.html")
	if err := os.WriteFile(page, out, 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := browse(t, chromium, page)
	checkClean(t, dom, console)
	// The burst thread is new in B, and the host switched far more.
	for _, want := range []string{reporttest.BurstName + " in svc-1000", "only in B", "higher in B"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
}

func TestReportAndDiffRefuseADamagedRecordingAsReplayDoes(t *testing.T) {
	bin := testutil.Binary(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ctxrec")
	if err := reporttest.Write(good, reporttest.Header(), reporttest.Steady(20)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"junk.ctxrec": []byte("not a recording at all\n"), "head.ctxrec": data[:20], "empty.ctxrec": nil}
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var replayErr bytes.Buffer
		rc := exec.Command(bin, "replay", "-b", path)
		rc.Stderr = &replayErr
		if rc.Run() == nil {
			t.Fatalf("replay %s succeeded", name)
		}
		for _, args := range [][]string{{"report", path, "-o", filepath.Join(dir, "x.html")}, {"diff", path, good}, {"diff", good, path}} {
			var stderr bytes.Buffer
			c := exec.Command(bin, args...)
			c.Stderr = &stderr
			err := c.Run()
			if err == nil {
				t.Errorf("%v succeeded", args)
				continue
			}
			if diff := strings.TrimSpace(replayErr.String()); strings.TrimSpace(stderr.String()) != diff {
				t.Errorf("%v said %q, replay %q", args, stderr.String(), diff)
			}
			if strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 || strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("%v: not one line: %q", args, stderr.String())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a refused report left a page behind")
	}
}

// TestDiffOfTwoLoadRunsFindsTheirFactor records ctxtop's own poll load
// at two periods, 10 ms and 5 ms: each sleeper wakes, and switches
// voluntarily, 100 and 200 times a second, so the group's voluntary
// switches double. The diff must find 2× within 5%, and call it higher.
func TestDiffOfTwoLoadRunsFindsTheirFactor(t *testing.T) {
	if testing.Short() {
		t.Skip("records two 6 s load runs")
	}
	bin := testutil.Binary(t)
	dir := t.TempDir()
	recordLoad := func(name, period string) string {
		path := filepath.Join(dir, name)
		load := exec.Command(bin, "load", "--mode", "poll", "--threads", "4", "--period", period, "--duration", "10s")
		if err := load.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { load.Process.Kill(); load.Wait() }()
		// The load's threads start within a second; the recording then
		// sees them steady from its first interval.
		time.Sleep(time.Second)
		if out, err := exec.Command(bin, "record", "-o", path, "--duration", "7s").CombinedOutput(); err != nil {
			t.Fatalf("record: %v\n%s", err, out)
		}
		return path
	}
	a, b := recordLoad("p10.ctxrec", "10ms"), recordLoad("p5.ctxrec", "5ms")
	out, err := exec.Command(bin, "diff", a, b, "-o", "json", "--top", "1000").Output()
	if err != nil {
		t.Fatalf("diff: %v", err)
	}
	var d struct {
		Rows []struct {
			Kind, Name string
			Metrics    []struct {
				Name    string
				Ratio   *float64
				Verdict string
			}
		}
	}
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("diff JSON: %v", err)
	}
	for _, r := range d.Rows {
		if r.Kind != "group" || !strings.HasPrefix(r.Name, "poll-sleeper") {
			continue
		}
		for _, m := range r.Metrics {
			if m.Name != "cs/s voluntary" {
				continue
			}
			if m.Ratio == nil || math.Abs(*m.Ratio/2-1) > 0.05 {
				t.Errorf("%s: voluntary B/A = %v, want 2 ±5%%", r.Name, m.Ratio)
			}
			if m.Verdict != "higher" {
				t.Errorf("%s: verdict %q, want higher", r.Name, m.Verdict)
			}
			return
		}
	}
	t.Errorf("no poll-sleeper group in the comparison:\n%s", out)
}
