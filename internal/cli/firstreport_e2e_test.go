package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/testutil"
)

// TestFirstReportNamesTheWait: a single report (-b -n 1) of a futex
// ping-pong must say futex for both sides, every time, as the host is and
// beside two busy loops. Its hot threads were only looked at in a burst at
// the refresh, which sees one moment of the scheduler: on a busy host one
// side had no reason in most first reports (14 of 20), and in some on a
// quiet one.
func TestFirstReportNamesTheWait(t *testing.T) {
	bin := testutil.Binary(t)
	pid := startFutexLoad(t, bin)
	for _, c := range []struct {
		name string
		busy int
	}{{"as the host is", 0}, {"beside two busy loops", 2}} {
		t.Run(c.name, func(t *testing.T) {
			for range c.busy {
				spin := exec.Command("sh", "-c", "while :; do :; done")
				if err := spin.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = spin.Process.Kill(); _ = spin.Wait() })
			}
			const reports = 20
			bad := 0
			for i := range reports {
				out, err := exec.Command(bin, "-b", "-o", "json", "-n", "1", "-d", "1", "-p", strconv.Itoa(pid)).Output()
				if err != nil {
					t.Fatalf("ctxtop: %v\n%s", err, exitStderr(err))
				}
				if miss := futexSidesMissing(t, out); miss != "" {
					bad++
					t.Errorf("report %d: %s", i+1, miss)
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d first reports lack futex for a side", bad, reports)
			}
		})
	}
}

// futexSidesMissing says which ping-pong side of a JSON report does not
// name futex as its wait, "" when both do: "blocking: futex" first, or for
// a side with more involuntary switches than voluntary ones in that
// interval (a busy host's scheduler preempts them often), "preempted"
// with futex its looks' main wait.
func futexSidesMissing(t *testing.T, out []byte) string {
	t.Helper()
	var r struct {
		Threads []struct {
			Comm   string             `json:"comm"`
			Reason string             `json:"reason"`
			WaitOn map[string]float64 `json:"wait_on"`
			Why    struct {
				Kind string `json:"kind"`
				On   []struct {
					Reason string `json:"reason"`
				} `json:"on"`
			} `json:"why"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var miss []string
	for _, side := range []string{"ping-futex", "pong-futex"} {
		said := "no row"
		for _, th := range r.Threads {
			if th.Comm != side {
				continue
			}
			switch {
			case th.Why.Kind == "blocking" && len(th.Why.On) > 0 && th.Why.On[0].Reason == "futex":
				said = ""
			case th.Why.Kind == "preempted" && th.WaitOn["futex wait"] >= 0.5:
				said = ""
			default:
				said = fmt.Sprintf("%q, looks %v", th.Reason, th.WaitOn)
			}
		}
		if said != "" {
			miss = append(miss, side+" says "+said)
		}
	}
	return strings.Join(miss, ", ")
}

// startFutexLoad starts `ctxtop load --mode futex` and returns the PID of
// the process its two sides run in (the load re-executes itself), once
// both run. Other futex loads may run on the host: only this one's child
// counts.
func startFutexLoad(t *testing.T, bin string) int {
	t.Helper()
	load := exec.Command(bin, "load", "--mode", "futex", "--duration", "10m")
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = load.Process.Kill(); _ = load.Wait() })
	// On a loaded machine the workload process can take seconds to start.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if pid := childWithThreads(load.Process.Pid, "ping-futex", "pong-futex"); pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatal("no ping-futex and pong-futex threads 30 s after ctxtop load started")
		}
	}
}

// childWithThreads is the child of parent that has threads named each of
// comms, 0 for none.
func childWithThreads(parent int, comms ...string) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The parent is the second field after the parenthesized name.
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		dir := filepath.Dir(p)
		found := 0
		for _, comm := range comms {
			names, _ := filepath.Glob(filepath.Join(dir, "task", "*", "comm"))
			for _, n := range names {
				if c, err := os.ReadFile(n); err == nil && strings.TrimSpace(string(c)) == comm {
					found++
					break
				}
			}
		}
		if found == len(comms) {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			return pid
		}
	}
	return 0
}
