package cli_test

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// needStacks skips where the stack programs cannot run, except under CI
// (root with BTF), where they must.
func needStacks(t *testing.T) {
	t.Helper()
	if err := stacks.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("stack programs unavailable under CI: %v", err)
		}
		t.Skip(err)
	}
}

type stackJSON struct {
	Frames []string `json:"frames"`
	Own    string   `json:"own"`
	Waker  string   `json:"waker_comm"`
	Share  float64  `json:"share"`
	Count  uint64   `json:"count"`
}

type stackThread struct {
	TID       int         `json:"tid"`
	Comm      string      `json:"comm"`
	Reason    string      `json:"reason"`
	BlockedAt []stackJSON `json:"blocked_at"`
	WokenFrom []stackJSON `json:"woken_from"`
}

// threadOf is the row of the thread named comm in a JSON report.
func threadOf(t *testing.T, line, comm string) stackThread {
	t.Helper()
	var r struct {
		Threads []stackThread `json:"threads"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("not JSON: %v\n%.300s", err, line)
	}
	for _, th := range r.Threads {
		if th.Comm == comm {
			return th
		}
	}
	return stackThread{}
}

func ownShare(ss []stackJSON, fn string) float64 {
	var s float64
	for _, x := range ss {
		if x.Own == fn {
			s += x.Share
		}
	}
	return s
}

func lines(b []byte) []string { return strings.Split(strings.TrimSpace(string(b)), "\n") }

// TestRecordedStacksReplayAsLive records a stacks run of a C program whose
// thread blocks in reader_loop and consumer_wait, woken from writer_loop and
// producer_put, replays it, and checks that the replay prints every report
// the live run printed (blocked_at, woken_from, WHY and the stack fields),
// naming those functions with the shares the program counted itself; that
// -o folded works on the recording; and that ctxtop record --stacks keeps
// them too.
func TestRecordedStacksReplayAsLive(t *testing.T) {
	needStacks(t)
	bin := testutil.Binary(t)
	b := testutil.StartBlockers(t)
	pid := strconv.Itoa(b.PID)
	file := filepath.Join(t.TempDir(), "stacks.ctxrec")

	// A busy machine may delay the threads: run again until the program
	// has blocked often enough for shares to mean something.
	var live []string
	var reads, conds int64
	for deadline := time.Now().Add(90 * time.Second); ; {
		out, err := exec.Command(bin, "-b", "-o", "json", "--stacks", "-p", pid, "-d", "0.5", "-n", "6", "--record", file, "--force").Output()
		if err != nil {
			t.Fatalf("ctxtop --record: %v\n%s", err, exitStderr(err))
		}
		live = lines(out)
		reads, conds = b.Counts()
		var n uint64
		for _, s := range threadOf(t, live[len(live)-1], "mixed").BlockedAt {
			n += s.Count
		}
		if (n >= 200 && reads+conds >= 200) || time.Now().After(deadline) {
			break
		}
		t.Logf("only %d blocking switches traced (%d counted by the program); again", n, reads+conds)
	}
	out, err := exec.Command(bin, "replay", "-b", "-o", "json", file).Output()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, exitStderr(err))
	}
	replayed := lines(out)
	if len(replayed) != len(live) {
		t.Fatalf("%d reports replayed, %d live:\n%s", len(replayed), len(live), out)
	}
	for i := range live {
		var a, b map[string]any
		if err := json.Unmarshal([]byte(live[i]), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(replayed[i]), &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("report %d (-live +replay):\n%s", i, diff)
		}
	}

	// The replay's last report names the program's functions with the
	// shares it counted (as the live one must, the same bytes).
	last := threadOf(t, replayed[len(replayed)-1], "mixed")
	t.Logf("program: reads=%d conds=%d; replayed blocked_at %+v; woken_from %+v; WHY %q", reads, conds, last.BlockedAt, last.WokenFrom, last.Reason)
	want := map[string]float64{
		"reader_loop":   float64(reads) / float64(reads+conds),
		"consumer_wait": float64(conds) / float64(reads+conds),
	}
	for fn, w := range want {
		if got := ownShare(last.BlockedAt, fn); math.Abs(got-w) > 0.10 {
			t.Errorf("replayed blocked_at share in %s = %.3f, program counted %.3f", fn, got, w)
		}
	}
	for fn, w := range map[string]float64{"writer_loop": want["reader_loop"], "producer_put": want["consumer_wait"]} {
		if got := ownShare(last.WokenFrom, fn); math.Abs(got-w) > 0.10 {
			t.Errorf("replayed woken_from share in %s = %.3f, program counted %.3f", fn, got, w)
		}
	}

	out, err = exec.Command(bin, "replay", "-b", "-o", "folded", file).Output()
	if err != nil {
		t.Fatalf("replay -o folded: %v\n%s", err, exitStderr(err))
	}
	var offCPU, woken bool
	for _, l := range lines(out) {
		sp := strings.LastIndexByte(l, ' ')
		if n, err := strconv.ParseUint(l[sp+1:], 10, 64); sp < 0 || err != nil || n == 0 {
			t.Fatalf("folded line without a count: %q", l)
		}
		f := strings.Split(l[:sp], ";")
		offCPU = offCPU || f[0] == "mixed" && f[1] == "[off-cpu]" && slices.Contains(f, "consumer_wait")
		woken = woken || f[0] == "mixed" && f[1] == "[woken by driver]" && slices.Contains(f, "producer_put")
	}
	if !offCPU || !woken {
		t.Errorf("replayed folded stacks: off-CPU in consumer_wait %v, woken from producer_put %v:\n%.800s", offCPU, woken, out)
	}

	// ctxtop record --stacks keeps them as well.
	file2 := filepath.Join(t.TempDir(), "record.ctxrec")
	if out, err := exec.Command(bin, "record", "--stacks", "-o", file2, "-d", "0.5", "--duration", "3", "-p", pid).CombinedOutput(); err != nil {
		t.Fatalf("record --stacks: %v\n%s", err, out)
	}
	out, err = exec.Command(bin, "replay", "-b", "-o", "json", file2).Output()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, exitStderr(err))
	}
	rl := lines(out)
	if th := threadOf(t, rl[len(rl)-1], "mixed"); ownShare(th.BlockedAt, "consumer_wait") == 0 || ownShare(th.WokenFrom, "producer_put") == 0 {
		t.Errorf("a replay of record --stacks names neither consumer_wait nor producer_put: %+v", th)
	}
}
