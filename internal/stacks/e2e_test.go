package stacks_test

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/stacks"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

type jsonStack struct {
	Frames []string `json:"frames"`
	Own    string   `json:"own"`
	Waker  string   `json:"waker_comm"`
	Share  float64  `json:"share"`
	Count  uint64   `json:"count"`
}

type report struct {
	Threads []struct {
		TID       int         `json:"tid"`
		Comm      string      `json:"comm"`
		Reason    string      `json:"reason"`
		BlockedAt []jsonStack `json:"blocked_at"`
		WokenFrom []jsonStack `json:"woken_from"`
	} `json:"threads"`
	StacksUnavailable string `json:"stacks_unavailable"`
	StacksTargets     []int  `json:"stacks_targets"`
}

func needBPF(t *testing.T) {
	t.Helper()
	if err := stacks.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("BPF unavailable under CI: %v", err)
		}
		t.Skip(err)
	}
}

// shareOf sums the shares of the stacks whose own frame is fn.
func shareOf(ss []jsonStack, fn string) float64 {
	var s float64
	for _, x := range ss {
		if x.Own == fn {
			s += x.Share
		}
	}
	return s
}

// TestJSONNamesWhereCBlocks runs ctxtop -b -o json --stacks -p on a C
// program whose thread blocks in reader_loop and consumer_wait, woken from
// writer_loop and producer_put, and checks that the stacks name those
// functions with the shares the program counted itself (±10 points).
func TestJSONNamesWhereCBlocks(t *testing.T) {
	needBPF(t)
	bin := testutil.Binary(t)
	b := testutil.StartBlockers(t)
	pid := strconv.Itoa(b.PID)

	// Without --stacks nothing of it is there.
	out, err := exec.Command(bin, "-b", "-o", "json", "-p", pid, "-d", "0.5", "-n", "1").Output()
	if err != nil {
		t.Fatalf("ctxtop: %v", err)
	}
	if strings.Contains(string(out), "blocked_at") || strings.Contains(string(out), "stacks_") {
		t.Errorf("stacks in a report without --stacks:\n%s", out)
	}

	// A busy machine may delay the threads: try a few runs until the
	// program has blocked often enough for shares to mean something.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var r report
		lastReport(t, bin, &r, "--stacks", "-p", pid, "-d", "0.5", "-n", "6")
		reads, conds := b.Counts()
		if r.StacksUnavailable != "" {
			t.Fatalf("stacks_unavailable: %s", r.StacksUnavailable)
		}
		var blocked, woken []jsonStack
		for _, th := range r.Threads {
			if th.Comm == "mixed" {
				blocked, woken = th.BlockedAt, th.WokenFrom
			}
		}
		var n uint64
		for _, s := range blocked {
			n += s.Count
		}
		if (n < 200 || reads+conds < 200) && time.Now().Before(deadline) {
			t.Logf("only %d blocking switches traced (%d counted by the program); again", n, reads+conds)
			continue
		}
		want := map[string]float64{
			"reader_loop":   float64(reads) / float64(reads+conds),
			"consumer_wait": float64(conds) / float64(reads+conds),
		}
		t.Logf("program: reads=%d conds=%d; blocked_at %+v; woken_from %+v", reads, conds, blocked, woken)
		for fn, w := range want {
			if got := shareOf(blocked, fn); math.Abs(got-w) > 0.10 {
				t.Errorf("blocked_at share in %s = %.3f, program counted %.3f", fn, got, w)
			}
		}
		for fn, w := range map[string]float64{"writer_loop": want["reader_loop"], "producer_put": want["consumer_wait"]} {
			if got := shareOf(woken, fn); math.Abs(got-w) > 0.10 {
				t.Errorf("woken_from share in %s = %.3f, program counted %.3f", fn, got, w)
			}
		}
		for _, s := range woken {
			if s.Own != "" && s.Waker != "driver" {
				t.Errorf("woken from %s by %q, want driver", s.Own, s.Waker)
			}
		}
		for _, s := range blocked {
			// Innermost first: the kernel's scheduler before the user code.
			if k, u := slices.Index(s.Frames, "__schedule"), slices.Index(s.Frames, s.Own); s.Own != "" && (k < 0 || k > u) {
				t.Errorf("frames not innermost first: %q", s.Frames)
			}
		}
		return
	}
}

// TestFoldedIsRootFirst checks -o folded: collapsed stacks, outermost
// frame first after the thread name and marker, with counts.
func TestFoldedIsRootFirst(t *testing.T) {
	needBPF(t)
	bin := testutil.Binary(t)
	b := testutil.StartBlockers(t)
	out, err := exec.Command(bin, "-b", "-o", "folded", "-p", strconv.Itoa(b.PID), "-d", "0.5", "-n", "4").Output()
	if err != nil {
		t.Fatalf("ctxtop: %v", err)
	}
	var offCPU, woken bool
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		sp := strings.LastIndexByte(l, ' ')
		if sp < 0 {
			t.Fatalf("line without a count: %q", l)
		}
		if n, err := strconv.ParseUint(l[sp+1:], 10, 64); err != nil || n == 0 {
			t.Errorf("bad count in %q", l)
		}
		f := strings.Split(l[:sp], ";")
		switch {
		case len(f) > 2 && f[0] == "mixed" && f[1] == "[off-cpu]" && slices.Contains(f, "reader_loop"):
			offCPU = true
			if m, r, s := slices.Index(f, "mixed"), slices.Index(f, "reader_loop"), slices.Index(f, "__schedule"); !(m < r && r < s) {
				t.Errorf("not root first: %q", l)
			}
		case len(f) > 2 && f[0] == "mixed" && f[1] == "[woken by driver]" && slices.Contains(f, "producer_put"):
			woken = true
			// f[0] is the wakee's name; the waker's frames follow the marker.
			if d, p, k := slices.Index(f[2:], "driver"), slices.Index(f[2:], "producer_put"), slices.Index(f[2:], "try_to_wake_up"); !(d >= 0 && d < p && p < k) {
				t.Errorf("not root first: %q", l)
			}
		}
	}
	if !offCPU || !woken {
		t.Errorf("off-CPU stack in reader_loop found: %v, waker stack in producer_put: %v\n%s", offCPU, woken, out)
	}
}

// TestStacksWithoutPIDs runs ctxtop -b -o json --stacks without -p: the
// collector starts with no target, detached, and must attach once a
// snapshot gives it the hot blocking threads to trace.
func TestStacksWithoutPIDs(t *testing.T) {
	needBPF(t)
	bin := testutil.Binary(t)
	testutil.StartBlockers(t)
	deadline := time.Now().Add(60 * time.Second)
	for {
		var r report
		last := lastReport(t, bin, &r, "--stacks", "-d", "0.5", "-n", "4")
		if r.StacksUnavailable != "" {
			t.Fatalf("stacks_unavailable: %s", r.StacksUnavailable)
		}
		traced := false
		for _, th := range r.Threads {
			if th.Comm == "mixed" && slices.Contains(r.StacksTargets, th.TID) && shareOf(th.BlockedAt, "reader_loop") > 0 {
				traced = true
			}
		}
		if traced {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stack of mixed where it blocks in reader_loop; targets %v; last report:\n%s", r.StacksTargets, last)
		}
		t.Logf("mixed not traced yet (targets %v); again", r.StacksTargets)
	}
}

// lastReport runs ctxtop -b -o json with args, decodes its last report
// into r and returns it as printed.
func lastReport(t *testing.T, bin string, r any, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, append([]string{"-b", "-o", "json"}, args...)...).Output()
	if err != nil {
		t.Fatalf("ctxtop: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), r); err != nil {
		t.Fatalf("last report: %v\n%s", err, lines[len(lines)-1])
	}
	return lines[len(lines)-1]
}
