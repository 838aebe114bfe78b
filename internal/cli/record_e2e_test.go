package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/tui/tuitest"
)

// TestReplayPrintsWhatBatchPrintedLive records a pipe ping-pong with the
// very samples a live batch run takes, replays the recording, and compares
// the two outputs field by field: thread rows, the cgroup rows and the
// ping-pong's wait_on shares (its threads block hot on a pipe) included.
func TestReplayPrintsWhatBatchPrintedLive(t *testing.T) {
	bin := testutil.Binary(t)
	pid, _ := testutil.StartPingPong(t)
	file := filepath.Join(t.TempDir(), "live.ctxrec")
	for _, args := range [][]string{{"-o", "json"}, {"-o", "text"}, {"-o", "text", "--cgroups"}} {
		// --force: each format records anew over the last one's file.
		live, err := exec.Command(bin, append([]string{"-b", "-d", "0.3", "-n", "4", "--record", file, "--force"}, args...)...).Output()
		if err != nil {
			t.Fatalf("%v live: %v\n%s", args, err, exitStderr(err))
		}
		replayed, err := exec.Command(bin, append([]string{"-b", "--replay", file}, args...)...).Output()
		if err != nil {
			t.Fatalf("%v replay: %v\n%s", args, err, exitStderr(err))
		}
		if args[1] == "text" {
			if diff := cmp.Diff(string(live), string(replayed)); diff != "" {
				t.Errorf("%v (-live +replay):\n%s", args, diff)
			}
			continue
		}
		liveLines, replayLines := strings.Split(string(live), "\n"), strings.Split(string(replayed), "\n")
		if diff := cmp.Diff(5, len(replayLines)); diff != "" {
			t.Fatalf("replayed lines (-want +got):\n%s\n%s", diff, replayed)
		}
		var sawWorkload, sawCgroups, sawWaitOn bool
		for i := range liveLines {
			var a, b map[string]any
			if liveLines[i] == "" {
				continue
			}
			if err := json.Unmarshal([]byte(liveLines[i]), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(replayLines[i]), &b); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, b); diff != "" {
				t.Errorf("report %d (-live +replay):\n%s", i, diff)
			}
			var r struct {
				Threads []struct {
					PID    int                `json:"pid"`
					WaitOn map[string]float64 `json:"wait_on"`
				} `json:"threads"`
				Cgroups []any `json:"cgroups"`
			}
			if err := json.Unmarshal([]byte(liveLines[i]), &r); err != nil {
				t.Fatal(err)
			}
			sawCgroups = sawCgroups || len(r.Cgroups) > 0
			for _, th := range r.Threads {
				sawWorkload = sawWorkload || th.PID == pid
				sawWaitOn = sawWaitOn || th.PID == pid && len(th.WaitOn) > 0
			}
		}
		if !sawWorkload || !sawWaitOn {
			t.Errorf("the ping-pong %d is in a live report: %v, with wait_on: %v; want both:\n%s", pid, sawWorkload, sawWaitOn, live)
		}
		if !sawCgroups && cgroupsReadable() {
			t.Errorf("no live report has cgroup rows:\n%s", live)
		}
	}
}

// TestReplayKeepsTheRecordedHotThreshold replays a recording made with
// --hot far above any thread's rate: without --hot, neither replay nor
// -b --replay calls a thread hot; with --hot given, that threshold counts.
func TestReplayKeepsTheRecordedHotThreshold(t *testing.T) {
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "cold.ctxrec")
	if err := coldRecording(file); err != nil {
		t.Fatal(err)
	}
	hot := func(args ...string) int {
		t.Helper()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, exitStderr(err))
		}
		if n := bytes.Count(out, []byte(`"time"`)); n != 4 {
			t.Fatalf("%v: %d reports from 5 samples, want 4:\n%.300s", args, n, out)
		}
		return bytes.Count(out, []byte(`"hot":true`))
	}
	for _, args := range [][]string{{"-b", "-o", "json", "--replay", file}, {"replay", "-b", "-o", "json", file}} {
		if n := hot(args...); n != 0 {
			t.Errorf("%v: %d hot rows under the recording's threshold of 1e12 switches/s", args, n)
		}
		if n := hot(append(args, "--hot", "1000")...); n == 0 {
			t.Errorf("%v --hot 1000: no hot row", args)
		}
	}
}

// coldRecording writes 5 samples of a host whose busy threads switch
// 200-20,000 times a second, recorded with a hot threshold none reaches.
func coldRecording(path string) error {
	s := recordtest.New(40, 5, false)
	h := record.Header{Facts: hostinfo.Facts{Hostname: "cold-host"}, CPUs: 2, Interval: time.Second, ProcRoot: "/proc", HotThreshold: 1e12,
		Start: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), ZoneName: "UTC"}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := record.NewWriter(f, h, record.WriterOptions{})
	if err != nil {
		return err
	}
	for range 5 {
		smp := s.Next()
		if err := w.Write(&smp); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// cgroupsReadable says whether this host names a cgroup for a process, as
// the sampler needs for cgroup rows.
func cgroupsReadable() bool {
	b, err := os.ReadFile("/proc/self/cgroup")
	return err == nil && len(bytes.TrimSpace(b)) > 0
}

// TestKilledRecorderLeavesAReplayableFile kills the recorder with SIGKILL
// mid-run: the file replays up to its last complete chunk and says why it
// stops there.
func TestKilledRecorderLeavesAReplayableFile(t *testing.T) {
	bin := testutil.Binary(t)
	pid := busySelf(t)
	file := filepath.Join(t.TempDir(), "killed.ctxrec")
	cmd := exec.Command(bin, "record", "-o", file, "-p", strconv.Itoa(pid), "-d", "0.1", "--flush", "500ms")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for a few chunks.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := record.Open(file)
		if err == nil && r.Samples() >= 15 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the recorder wrote no second chunk in 20 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// A kill lands between two writes; make it one that tore a chunk, by
	// appending the head of the last one again.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndex(data, []byte("\xc7ck\x01"))
	if err := os.WriteFile(file, append(data, data[last:last+40]...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "replay", "-b", "-o", "json", file).CombinedOutput()
	if err != nil {
		t.Fatalf("replay after kill -9: %v\n%s", err, out)
	}
	if n := bytes.Count(out, []byte(`"time"`)); n < 14 {
		t.Errorf("%d reports from a file of 15+ samples", n)
	}
	if !bytes.Contains(out, []byte("stopped at byte")) {
		t.Errorf("replay does not say where it stopped:\n%.300s", out)
	}
}

func TestMaxSizeStopsOrRotates(t *testing.T) {
	bin := testutil.Binary(t)
	// One busy process, so the file's growth does not depend on what else
	// the host runs.
	pid := busySelf(t)
	p := strconv.Itoa(pid)
	dir := t.TempDir()
	stop := filepath.Join(dir, "cap.ctxrec")
	out, err := exec.Command(bin, "record", "-o", stop, "-p", p, "-d", "0.1", "--flush", "200ms", "--max-size", "3KB", "--duration", "60s").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "stopped at --max-size 3.0 KiB") {
		t.Errorf("the recorder does not say it stopped at the cap:\n%s", out)
	}
	if fi, err := os.Stat(stop); err != nil || fi.Size() > 3<<10 {
		t.Errorf("file past its cap: %v %v", fi.Size(), err)
	}
	if r, err := record.Open(stop); err != nil || len(r.Notes) > 0 || r.Samples() < 2 {
		t.Errorf("capped file: %v, notes %q", err, r.Notes)
	}

	ring := filepath.Join(dir, "ring.ctxrec")
	out, err = exec.Command(bin, "record", "-o", ring, "-p", p, "-d", "0.1", "--flush", "200ms", "--max-size", "1536", "--rotate", "3", "--duration", "3s").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "rotations") {
		t.Errorf("no rotation reported:\n%s", out)
	}
	names, _ := filepath.Glob(ring + "*")
	if diff := cmp.Diff([]string{ring, ring + ".1", ring + ".2"}, names); diff != "" {
		t.Errorf("files kept (-want +got):\n%s\n%s", diff, out)
	}
	parts := map[int]bool{}
	for _, n := range names {
		r, err := record.Open(n)
		if err != nil || len(r.Notes) > 0 {
			t.Errorf("%s: %v %q", n, err, r.Notes)
			continue
		}
		if fi, _ := os.Stat(n); fi.Size() > 1536 {
			t.Errorf("%s: %d bytes, past its cap", n, fi.Size())
		}
		parts[r.Header.Part] = true
	}
	if len(parts) != 3 {
		t.Errorf("kept files are not three different parts: %v", parts)
	}
}

// TestFullDiskStopsWithOneLine runs the recorder under a file size limit,
// which fails writes as a full disk does.
func TestFullDiskStopsWithOneLine(t *testing.T) {
	bin := testutil.Binary(t)
	pid := busySelf(t)
	file := filepath.Join(t.TempDir(), "full.ctxrec")
	// ulimit -f counts 1024-byte blocks; one busy process fills 3 KiB in
	// a second or two whatever else the host runs.
	cmd := exec.Command("sh", "-c", `ulimit -f 3 && exec "$0" record -o "$1" -p "$2" -d 0.1 --flush 200ms --duration 60s`, bin, file, strconv.Itoa(pid))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the recorder exited 0 on a full disk:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "file too large") || !strings.Contains(lines[0], "the file replays up to") {
		t.Errorf("want one line naming the error and saying the file replays, got:\n%s", out)
	}
	r, err := record.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if r.Samples() < 2 {
		t.Errorf("%d samples left readable", r.Samples())
	}
}

func TestBadRecordingsGiveOneLine(t *testing.T) {
	bin := testutil.Binary(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.ctxrec")
	if err := tuitest.ReplayFile(good, 30, 10, 12); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newer := bytes.Clone(data)
	newer[len("CTXTOPREC")] = 9
	for _, tc := range []struct {
		path, want string
	}{
		{write("empty", nil), "not a ctxtop recording: the file is empty"},
		{write("text", []byte("#!/bin/sh\necho hi\n")), "not a ctxtop recording"},
		{write("newer", newer), "written with format 9, this ctxtop reads up to " + strconv.Itoa(record.FormatVersion) + "; replay it with a newer ctxtop"},
		{write("header-only", data[:bytes.Index(data, []byte("\xc7ck\x01"))]), "recording holds no samples"},
		{write("cut-header", data[:30]), "the file ends inside its header"},
		{dir, "not a regular file"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		out, err := exec.Command(bin, "replay", "-b", tc.path).CombinedOutput()
		if err == nil {
			t.Errorf("%s: exit 0", tc.path)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if !strings.Contains(lines[len(lines)-1], tc.want) || strings.Contains(string(out), "goroutine") {
			t.Errorf("%s: want a line with %q, got:\n%s", filepath.Base(tc.path), tc.want, out)
		}
	}
}

func TestInfoSaysWhenAndWho(t *testing.T) {
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "storm.ctxrec")
	if err := tuitest.ReplayFile(file, 120, 60, 66); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"record", "--info", file}, {"replay", "--info", file}} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		for _, want := range []string{"host       replay-host, kernel 6.1.0-test, 2 CPUs", "120 samples", "spikes     1", "10:01:00", "top: "} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out)
			}
		}
	}
	out, err := exec.Command(bin, "replay", "-b", "--top", "1", "--from", "10:00:30", "--to", "+40s", file).Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, exitStderr(err))
	}
	// Samples are 1 s and ~1.5 ms apart from 10:00:01, and +40s counts
	// from --from: 29 to 68 fall in, 10:00:30.0x to 10:01:09.1x. A
	// report's system line is the one with in/s (a spike's reason names
	// cs/s too).
	if n := strings.Count(string(out), " in/s "); n != 40 {
		t.Errorf("--from 10:00:30 --to +40s printed %d reports, want 40:\n%s", n, out)
	}
}

// TestOtherCPUCountIsSaid replays a recording from a 64-CPU host: it says
// so, and shows the reports anyway.
func TestOtherCPUCountIsSaid(t *testing.T) {
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "big.ctxrec")
	if err := tuitest.ReplayFileFrom(file, 5, 0, 0, 64); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "replay", "-b", "--top", "1", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "recorded on replay-host with 64 CPUs (this host has") {
		t.Errorf("stderr does not name the other CPU count:\n%s", stderr.String())
	}
	if n := strings.Count(string(out), "cs/s"); n != 4 {
		t.Errorf("%d reports from 5 samples, want 4:\n%s", n, out)
	}
}

// busySelf makes this test process a workload: a goroutine sleeping a
// millisecond at a time, so its threads switch ~1,000 times a second until
// the test ends. Unlike a ping-pong child, it cannot be mistaken for
// another test's workload by name.
func busySelf(t *testing.T) int {
	t.Helper()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(done) })
	return os.Getpid()
}

// TestDamagedMiddleIsReported flips a byte in the middle of a recording:
// replay shows what comes before and says where the damage was.
func TestDamagedMiddleIsReported(t *testing.T) {
	bin := testutil.Binary(t)
	file := filepath.Join(t.TempDir(), "bad.ctxrec")
	if err := tuitest.ReplayFile(file, 60, 0, 0); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x55
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "replay", "-b", "--top", "1", file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "damaged data at byte") || !strings.Contains(stderr.String(), "checksum mismatch") {
		t.Errorf("stderr does not say where the damage is:\n%s", stderr.String())
	}
	if n := strings.Count(string(out), "cs/s"); n < 10 || n >= 59 {
		t.Errorf("%d reports from a file damaged in its middle", n)
	}
}
