package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestReportNamesTheSpikeAndTheThreadThatCausedIt(t *testing.T) {
	dir := t.TempDir()
	path := writeRecording(t, dir, "burst.ctxrec", testHeader(), burstSamples(60, 30, 36))
	r, err := Build(openPlayer(t, path), path, "test")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("REPORT_OUT"); out != "" {
		os.WriteFile(out, buf.Bytes(), 0o644)
	}
	if len(r.Spikes) != 1 {
		t.Fatalf("spikes = %d, want 1: %+v", len(r.Spikes), r.Spikes)
	}
	s := r.Spikes[0]
	if len(s.Threads) == 0 || s.Threads[0].TID != burstTID || s.Threads[0].Comm != burstName {
		t.Errorf("busiest thread in the spike = %+v, want %s %d", s.Threads, burstName, burstTID)
	}
	if !strings.Contains(buf.String(), burstName) {
		t.Errorf("the page does not name %s", burstName)
	}
}
