package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/pipeline"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// runFor runs the binary with args for at most limit: a command that
// hangs fails the test rather than the test run.
func runFor(t *testing.T, limit time.Duration, dir string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, testutil.Binary(t), args...)
	cmd.Dir = dir
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("still running after %v: %w", limit, ctx.Err())
	}
	return o.Bytes(), e.Bytes(), err
}

// oneLine says whether b is exactly one "ctxtop: " line containing want.
func oneLine(b []byte, want string) bool {
	s := string(b)
	return strings.Count(s, "\n") == 1 && strings.HasPrefix(s, "ctxtop: ") && strings.Contains(s, want)
}

// fsNode is a file system node a recording must neither replace nor read.
type fsNode struct {
	kind string
	make func(path string) error
}

// fsNodes are a FIFO and, as root, a character device: /dev/null's 1:3.
func fsNodes(t *testing.T) []fsNode {
	ns := []fsNode{{"a FIFO", func(p string) error { return unix.Mkfifo(p, 0o644) }}}
	if os.Geteuid() == 0 {
		ns = append(ns, fsNode{"a character device", func(p string) error {
			return unix.Mknod(p, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3)))
		}})
	} else {
		t.Log("not root: no character device to try")
	}
	return ns
}

// nodeID is what must not change about a node: inode, mode, device.
func nodeID(path string) ([3]uint64, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return [3]uint64{}, err
	}
	return [3]uint64{st.Ino, uint64(st.Mode), st.Rdev}, nil
}

// TestForceNeverReplacesADeviceOrFIFO: record -o and -b --record, with
// --force or without, refuse a FIFO or character device (and one among a
// ring's parts) in one line, and leave it as it was.
func TestForceNeverReplacesADeviceOrFIFO(t *testing.T) {
	pid := strconv.Itoa(busySelf(t))
	for _, n := range fsNodes(t) {
		for _, tc := range []struct {
			name string
			at   string
			args func(file string) []string
		}{
			{"record", "", func(f string) []string {
				return []string{"record", "-o", f, "-p", pid, "-d", "0.1", "--duration", "0.5"}
			}},
			{"record --rotate", ".2", func(f string) []string {
				return []string{"record", "-o", f, "-p", pid, "-d", "0.1", "--duration", "0.5", "--max-size", "1MB", "--rotate", "3"}
			}},
			{"-b --record", "", func(f string) []string { return []string{"-b", "-p", pid, "-d", "0.1", "-n", "3", "--record", f} }},
		} {
			for _, force := range []bool{false, true} {
				dir := t.TempDir()
				file := filepath.Join(dir, "r.ctxrec")
				if err := n.make(file + tc.at); err != nil {
					t.Fatal(err)
				}
				before, err := nodeID(file + tc.at)
				if err != nil {
					t.Fatal(err)
				}
				args := tc.args(file)
				if force {
					args = append(args, "--force")
				}
				_, stderr, err := runFor(t, 30*time.Second, dir, args...)
				want := filepath.Base(file+tc.at) + " is " + n.kind + ", not a regular file"
				if err == nil || !oneLine(stderr, want) {
					t.Errorf("%s onto %s, --force %v: %v, want exit 1 and one line saying %q:\n%s", tc.name, n.kind, force, err, want, stderr)
				}
				after, err := nodeID(file + tc.at)
				if diff := cmp.Diff(before, after); err != nil || diff != "" {
					t.Errorf("%s onto %s, --force %v: the node changed: %v (-want +got):\n%s", tc.name, n.kind, force, err, diff)
				}
			}
		}
	}
}

// TestReadersRefuseAFIFOAtOnce: every command that reads a recording
// refuses a FIFO (nobody writing it) or a device in one line, at once,
// rather than block in the open.
func TestReadersRefuseAFIFOAtOnce(t *testing.T) {
	for _, n := range fsNodes(t) {
		dir := t.TempDir()
		file := filepath.Join(dir, "r.ctxrec")
		if err := n.make(file); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"replay", file, "-b"},
			{"replay", file},
			{"replay", "--info", file},
			{"record", "--info", file},
			{"-b", "--replay", file},
		} {
			_, stderr, err := runFor(t, 10*time.Second, dir, args...)
			if err == nil || !oneLine(stderr, "r.ctxrec is "+n.kind+", not a regular file") {
				t.Errorf("%v on %s: %v, want exit 1 and one line saying what it is:\n%s", args, n.kind, err, stderr)
			}
		}
		// Unblock a reader a failed run may have left in the open.
		if f, err := os.OpenFile(file, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
}

// chunkEnds are the byte offsets where a recording's header and each of
// its chunks end: where the chunk sync markers are, and the file's end.
func chunkEnds(data []byte) []int {
	marker := []byte("\xc7ck\x01")
	var ends []int
	for off := 0; ; off += len(marker) {
		i := bytes.Index(data[off:], marker)
		if i < 0 {
			break
		}
		off += i
		ends = append(ends, off)
	}
	return append(ends, len(data))
}

// TestRecordStreamsToStdout: record -o - writes the recording to stdout
// (a pipe here, as over ssh), touches no file, and a stream cut at any
// byte replays up to its last whole chunk.
func TestRecordStreamsToStdout(t *testing.T) {
	pid := strconv.Itoa(busySelf(t))
	dir := t.TempDir()
	data, stderr, err := runFor(t, 60*time.Second, dir, "record", "-o", "-", "-p", pid, "-d", "0.1", "--duration", "3", "--flush", "0.2")
	if err != nil {
		t.Fatalf("record -o -: %v\n%s", err, stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Errorf("record -o - left files: %q", left)
	}
	m := regexp.MustCompile(`recorded (\d+) samples to stdout`).FindSubmatch(stderr)
	if m == nil {
		t.Fatalf("record -o - does not say what it wrote to stdout:\n%s", stderr)
	}
	said, _ := strconv.Atoi(string(m[1]))
	full := filepath.Join(dir, "full.ctxrec")
	if err := os.WriteFile(full, data, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, err := record.Open(full)
	if err != nil {
		t.Fatalf("the stream is not a recording: %v", err)
	}
	// A busy host skips ticks, so the count is not 31; a chunk is
	// flushed every 0.2 s of recorded time all the same.
	if rec.Samples() != said || said < 5 || len(rec.Notes) > 0 {
		t.Errorf("the stream holds %d samples (notes %q); the recorder said %d, of 3 s at 0.1 s", rec.Samples(), rec.Notes, said)
	}
	rec.Close()

	// Samples in the chunks before each chunk's end, then a cut at, just
	// after and in the middle of each chunk replays the whole ones.
	ends := chunkEnds(data)
	if len(ends) < 5 {
		t.Fatalf("%d chunks; the test needs several", len(ends))
	}
	whole := make([]int, len(ends))
	for i, end := range ends {
		r, err := record.Parse(data[:end])
		if err != nil {
			t.Fatal(err)
		}
		whole[i] = r.Samples()
	}
	for i := 1; i < len(ends); i++ {
		for _, cut := range []int{ends[i-1], ends[i-1] + 1, (ends[i-1] + ends[i]) / 2, ends[i] - 1} {
			want := whole[i-1]
			if want < 2 {
				continue
			}
			cutFile := filepath.Join(dir, "cut.ctxrec")
			if err := os.WriteFile(cutFile, data[:cut], 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, err := runFor(t, 30*time.Second, dir, "replay", "-b", "-o", "json", cutFile)
			if err != nil {
				t.Errorf("cut at byte %d of %d: %v\n%s", cut, len(data), err, stderr)
				continue
			}
			if got := bytes.Count(out, []byte("\n")); got != want-1 {
				t.Errorf("cut at byte %d of %d: %d reports, want %d (the %d samples of the whole chunks before it)", cut, len(data), got, want-1, want)
			}
		}
	}
}

// TestStreamRefusals: -o - cannot rotate, and --record - would mix the
// recording into the reports; each is one line before anything runs.
func TestStreamRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "-o", "-", "--max-size", "1MB", "--rotate", "3"}, "--rotate keeps files, and -o - is one stream to stdout"},
		{[]string{"-b", "-n", "1", "--record", "-"}, "--record - would put the recording on stdout with the reports"},
		{[]string{"-o", "json", "-n", "1", "--record", "-"}, "--record - would put the recording on stdout with the reports"},
	} {
		out, stderr, err := runFor(t, 10*time.Second, dir, tc.args...)
		if err == nil || !oneLine(stderr, tc.want) || len(out) > 0 {
			t.Errorf("%v: %v, want exit 1, no output and one line saying %q:\n%s%s", tc.args, err, tc.want, out, stderr)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Errorf("files left: %q", left)
	}
}

// TestRecordDurationCoversItsTime: --duration D is the time the rates
// cover, so D at -d I gives D/I+1 samples spanning D: the sample due at
// the very end is in, and a D of one interval or less still makes a
// recording a replay can show.
func TestRecordDurationCoversItsTime(t *testing.T) {
	pid := strconv.Itoa(busySelf(t))
	dir := t.TempDir()
	for _, tc := range []struct {
		duration, delay string
		span            time.Duration
	}{
		{"2", "0.5", 2 * time.Second},
		{"1", "1", time.Second},
		{"0.5", "1", time.Second},
	} {
		file := filepath.Join(dir, "d"+tc.duration+"-"+tc.delay+".ctxrec")
		_, stderr, err := runFor(t, 30*time.Second, dir, "record", "-o", file, "-p", pid, "-d", tc.delay, "--duration", tc.duration)
		if err != nil {
			t.Errorf("--duration %s -d %s: %v\n%s", tc.duration, tc.delay, err, stderr)
			continue
		}
		r, err := record.Open(file)
		if err != nil {
			t.Errorf("--duration %s -d %s: %v", tc.duration, tc.delay, err)
			continue
		}
		p, err := pipeline.NewPlayer(r, model.Options{})
		if err != nil {
			t.Errorf("--duration %s -d %s: %v", tc.duration, tc.delay, err)
			r.Close()
			continue
		}
		marks := p.Marks()
		first, last := marks[0].Time, marks[len(marks)-1].Time
		span, interval := last.Sub(first), r.Header.Interval
		// On a busy host a tick may come late (the span is then longer)
		// or, late past the next, be skipped: the samples are the ticks
		// the span holds, never fewer, and the last is the first at or
		// past the duration.
		want := int(math.Round(float64(span)/float64(interval))) + 1
		if span < tc.span || r.Samples() != want {
			t.Errorf("--duration %s -d %s: %d samples over %v, want %d over at least %v", tc.duration, tc.delay, r.Samples(), span, int(tc.span/interval)+1, tc.span)
		}
		if before := marks[len(marks)-2].Time.Sub(first); before >= tc.span {
			t.Errorf("--duration %s -d %s: a sample %v after the first, past the duration, and the recording went on", tc.duration, tc.delay, before)
		}
		if !bytes.Contains(stderr, []byte(fmt.Sprintf("recorded %d samples", r.Samples()))) {
			t.Errorf("--duration %s -d %s: the summary does not say %d samples:\n%s", tc.duration, tc.delay, r.Samples(), stderr)
		}
		r.Close()
	}
}

// TestTinyMaxSizeNamesTheSizeThatWorks: the size --max-size 1 names for
// the header and first sample is what they take: a cap a little above it
// holds the first sample (and then says a replay needs the second).
func TestTinyMaxSizeNamesTheSizeThatWorks(t *testing.T) {
	pid := strconv.Itoa(busySelf(t))
	dir := t.TempDir()
	file := filepath.Join(dir, "tiny.ctxrec")
	args := func(size string) []string {
		return []string{"record", "-o", file, "-p", pid, "-d", "0.1", "--duration", "1", "--max-size", size}
	}
	_, stderr, err := runFor(t, 30*time.Second, dir, args("1")...)
	m := regexp.MustCompile(`the header and first sample alone take ([0-9.]+ [KMG]?i?B)(?: \((\d+) B\))? on this host`).FindSubmatch(stderr)
	if err == nil || m == nil || !oneLine(stderr, "--max-size 1 B is too small") {
		t.Fatalf("--max-size 1: %v, want exit 1 and one line naming the size needed:\n%s", err, stderr)
	}
	n, _ := strconv.Atoi(strings.TrimSuffix(string(m[1]), " B"))
	if len(m[2]) > 0 {
		n, _ = strconv.Atoi(string(m[2]))
	}
	if n == 0 {
		t.Fatalf("no size in %q", stderr)
	}
	// The first sample's size moves by a few bytes from run to run.
	_, stderr, err = runFor(t, 30*time.Second, dir, args(strconv.Itoa(n+32))...)
	if err == nil || !oneLine(stderr, "holds one sample only") {
		t.Errorf("--max-size %d, a little over the %d B named: %v, want the first sample kept and one line asking for room for the second:\n%s", n+32, n, err, stderr)
	}
	if left, _ := filepath.Glob(file + "*"); len(left) > 0 {
		t.Errorf("files left: %q", left)
	}
}

// TestRotationSummarySaysWhatTheFilesHold: after rotations the summary
// names the newest file with its own sample count, and what the files
// kept hold, not every sample written as if FILE held them.
func TestRotationSummarySaysWhatTheFilesHold(t *testing.T) {
	pid := strconv.Itoa(busySelf(t))
	// A busy host skips ticks: a longer run until the ring has dropped
	// a part, which the summary must not count as kept.
	for _, duration := range []string{"4s", "8s", "16s"} {
		dir := t.TempDir()
		ring := filepath.Join(dir, "ring.ctxrec")
		_, stderr, err := runFor(t, 60*time.Second, dir, "record", "-o", ring, "-p", pid, "-d", "0.1", "--flush", "200ms", "--max-size", "1536", "--rotate", "3", "--duration", duration)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		m := regexp.MustCompile(`recorded (\d+) samples in .*; (\d+) rotations: ` + regexp.QuoteMeta(ring) + ` holds the last (\d+) \(.*\), and with ` +
			regexp.QuoteMeta(ring) + `\.1 to ` + regexp.QuoteMeta(ring) + `\.2 it keeps the last (\d+)`).FindSubmatch(stderr)
		if m == nil {
			t.Fatalf("the summary does not say what the files hold:\n%s", stderr)
		}
		count := func(name string) int {
			r, err := record.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			return r.Samples()
		}
		newest := count(ring)
		kept := newest + count(ring+".1") + count(ring+".2")
		total, _ := strconv.Atoi(string(m[1]))
		got := [2]string{string(m[3]), string(m[4])}
		if diff := cmp.Diff([2]string{strconv.Itoa(newest), strconv.Itoa(kept)}, got); diff != "" {
			t.Errorf("newest and kept (-in the files +said):\n%s\n%s", diff, stderr)
		}
		if total > kept {
			return
		}
		t.Logf("--duration %s: recorded %d, kept %d: the ring dropped nothing", duration, total, kept)
	}
	t.Errorf("the ring never dropped a part; the test needs it to")
}
