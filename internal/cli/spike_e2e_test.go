package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// TestBusyHostShowsOnlyItsBurst: a recording of a host at 60,000 switches a
// second per CPU with one 5 s burst of three times that has one spike, the
// burst, in --info and in every batch format.
func TestBusyHostShowsOnlyItsBurst(t *testing.T) {
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "busy.ctxrec")
	// Samples 40 to 44 (counting from 1) are the burst, from 10:00:40.
	if err := tuitest.BusyReplayFile(file, 90, 40, 45); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "record", "--info", file).CombinedOutput()
	if err != nil {
		t.Fatalf("--info: %v\n%s", err, out)
	}
	for _, want := range []string{"spikes     1;", "5 samples from 10:00:40", "the 5-min baseline 1"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--info lacks %q:\n%s", want, out)
		}
	}

	out, err = exec.Command(bin, "replay", "-b", "--top", "1", file).Output()
	if err != nil {
		t.Fatalf("replay -b: %v\n%s", err, exitStderr(err))
	}
	var spikes []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "SPIKE") {
			spikes = append(spikes, l[:8])
		}
	}
	if want := []string{"10:00:40", "10:00:41", "10:00:42", "10:00:43", "10:00:44"}; strings.Join(spikes, " ") != strings.Join(want, " ") {
		t.Errorf("text reports marked SPIKE at %v, want %v:\n%s", spikes, want, out)
	}

	out, err = exec.Command(bin, "replay", "-b", "-o", "json", "--top", "1", file).Output()
	if err != nil {
		t.Fatalf("replay -b -o json: %v\n%s", err, exitStderr(err))
	}
	spikes = nil
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Time   string
			System struct {
				Spike    string   `json:"spike"`
				Baseline *float64 `json:"baseline_cs_per_s"`
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		if r.System.Spike != "" {
			spikes = append(spikes, r.Time[11:19])
			if b := r.System.Baseline; b == nil || *b < 114_000 || *b > 126_000 {
				t.Errorf("%s: baseline_cs_per_s %v, want 120,000 ±5%%", r.Time, b)
			}
		}
	}
	if len(spikes) != 5 || spikes[0] != "10:00:40" {
		t.Errorf("JSON reports with a spike at %v, want the 5 from 10:00:40", spikes)
	}
}
