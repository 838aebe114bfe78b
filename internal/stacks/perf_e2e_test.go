package stacks_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/stacks"
)

// perfOwn reads perf script's output of sched_switch and sched_waking
// with DWARF call graphs and counts, for the thread named comm, the
// innermost frame in the program bin (its own code) of each blocking
// switch and of each waking of it; "" when perf's unwind did not reach
// the program.
func perfOwn(out []byte, comm, bin string) (blocked, woken map[string]int) {
	blocked, woken = map[string]int{}, map[string]int{}
	var cur map[string]int
	own, done := "", true
	flush := func() {
		if cur != nil {
			cur[own]++
		}
		cur, own, done = nil, "", true
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "":
			flush()
		case !strings.HasPrefix(l, "\t"):
			flush()
			switch {
			case strings.Contains(l, "sched:sched_switch:") && strings.Contains(l, "prev_comm="+comm+" ") && !strings.Contains(l, "prev_state=R"):
				cur, done = blocked, false
			case strings.Contains(l, "sched:sched_waking:") && strings.Contains(l, "comm="+comm+" "):
				cur, done = woken, false
			}
		case !done && strings.HasSuffix(l, "("+bin+")"):
			// "\t    129a ledger_settle (/path/prog)"
			f := strings.Fields(strings.TrimSuffix(l, "("+bin+")"))
			if len(f) >= 2 {
				own = strings.Join(f[1:], " ")
				if i := strings.IndexByte(own, '('); i > 0 {
					own = own[:i] // C++: perf prints the argument list
				}
			}
			done = true
		}
	}
	flush()
	return blocked, woken
}

// overlap is the share two distributions over functions have in common:
// 1 when they are the same.
func overlap(perf map[string]int, ours []model.StackShare) float64 {
	var n int
	for _, c := range perf {
		n += c
	}
	mine := map[string]float64{}
	for _, s := range ours {
		mine[s.Own] += s.Share
	}
	var o float64
	for f, c := range perf {
		o += min(float64(c)/float64(n), mine[f])
	}
	return o
}

// TestInnermostOwnMatchesPerfDwarf traces the C (no frame pointers) and
// C++ ledgers with perf record --call-graph dwarf, which records every
// event, and with the collector at the same time, and checks that the
// innermost own function of the settler's blocking switches and wakings
// has the same distribution in both, to 95%.
func TestInnermostOwnMatchesPerfDwarf(t *testing.T) {
	needBPF(t)
	perf, err := exec.LookPath("perf")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("perf is not installed; CI installs linux-perf: %v", err)
		}
		t.Skipf("perf is not installed: %v", err)
	}
	for _, tc := range []struct {
		name, cc, ext, src string
	}{
		{"c", "cc", ".c", ledgerPingPong},
		{"cxx", "c++", ".cc", ledgerCxx},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid := startBuilt(t, tc.cc, tc.ext, tc.src, "-O2", "-g")
			bin, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
			if err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(t.TempDir(), "perf.data")
			rec := exec.Command(perf, "record", "-q", "-o", data, "-e", "sched:sched_switch", "-e", "sched:sched_waking",
				"--call-graph", "dwarf,8192", "-p", strconv.Itoa(pid), "--", "sleep", "2")
			var stderr bytes.Buffer
			rec.Stderr = &stderr
			if err := rec.Start(); err != nil {
				t.Fatal(err)
			}
			st := collect(t, pid, stacks.Options{}, 4)
			if err := rec.Wait(); err != nil {
				t.Fatalf("perf record: %v\n%s", err, stderr.Bytes())
			}
			out, err := exec.Command(perf, "script", "-i", data, "-F", "comm,tid,event,trace,ip,sym,dso").Output()
			if err != nil {
				t.Fatalf("perf script: %v", err)
			}
			pb, pw := perfOwn(out, "settler", bin)
			th := st.Threads[threadsByComm(t, pid)["settler"]]
			if th == nil {
				t.Fatal("no stacks of settler")
			}
			t.Logf("perf: blocked %v, woken %v", pb, pw)
			for _, s := range th.BlockedAt {
				t.Logf("ctxtop blocked %.3f %s", s.Share, s.Own)
			}
			for _, s := range th.WokenFrom {
				t.Logf("ctxtop woken %.3f %s", s.Share, s.Own)
			}
			if ob := overlap(pb, th.BlockedAt); ob < 0.95 {
				t.Errorf("blocked at: innermost own functions agree with perf's for %.3f of the events, want >= 0.95", ob)
			}
			if ow := overlap(pw, th.WokenFrom); ow < 0.95 {
				t.Errorf("woken from: innermost own functions agree with perf's for %.3f of the events, want >= 0.95", ow)
			}
		})
	}
}
