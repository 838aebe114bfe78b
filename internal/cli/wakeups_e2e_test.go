package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/ctxtop/ctxtop/internal/testutil"
	"github.com/ctxtop/ctxtop/internal/waketrace"
)

// needBPF skips where the wake-up programs cannot run, except under CI
// (root with BTF), where they must.
func needBPF(t *testing.T) {
	t.Helper()
	if err := waketrace.Check(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("path: BPF unavailable under CI: %v", err)
		}
		t.Skipf("path: skipped, %v", err)
	}
	t.Log("path: real BPF programs")
}

type wakeupReport struct {
	Wakeups *[]struct {
		WakerPID  int      `json:"waker_pid"`
		WakerTID  int      `json:"waker_tid"`
		WakerComm string   `json:"waker_comm"`
		WakeePID  int      `json:"wakee_pid"`
		WakeeTID  int      `json:"wakee_tid"`
		WakeeComm string   `json:"wakee_comm"`
		PerSec    float64  `json:"per_s"`
		Cross     *float64 `json:"cross_cpu_pct"`
		P50       *float64 `json:"latency_p50_us"`
		P99       *float64 `json:"latency_p99_us"`
	} `json:"wakeups"`
}

func TestBatchWakeupsJSON(t *testing.T) {
	needBPF(t)
	pid, tids := testutil.StartPingPong(t)
	out, err := exec.Command(testutil.Binary(t), "-o", "json", "--wakeups", "-n", "2", "-d", "0.5").Output()
	if err != nil {
		t.Fatalf("ctxtop --wakeups: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d reports, want 2:\n%s", len(lines), out)
	}
	for i, l := range lines {
		var r wakeupReport
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if r.Wakeups == nil {
			t.Fatalf("report %d has no wakeups array: %s", i, l)
		}
		found := map[[2]int]float64{}
		for _, p := range *r.Wakeups {
			if p.WakerPID == pid && p.WakeePID == pid {
				found[[2]int{p.WakerTID, p.WakeeTID}] = p.PerSec
				// The busy pairs are timed in every interval; a rare one
				// only when a wake-up falls in the latency share (null
				// otherwise).
				if !slices.Contains(tids, p.WakerTID) || !slices.Contains(tids, p.WakeeTID) {
					continue
				}
				if p.P50 == nil || p.P99 == nil || *p.P50 <= 0 || *p.P99 < *p.P50 || p.Cross == nil {
					t.Errorf("report %d: %s→%s cross-CPU %v latency p50 %v p99 %v", i, p.WakerComm, p.WakeeComm, p.Cross, p.P50, p.P99)
				}
			}
		}
		there, back := found[[2]int{tids[0], tids[1]}], found[[2]int{tids[1], tids[0]}]
		if there < 100 || back < 100 {
			t.Errorf("report %d: pp-ping↔pp-pong at %.0f and %.0f wake-ups/s, want both busy; pairs of %d: %v", i, there, back, pid, found)
		}
	}
}

// TestBatchWakeupsMatchVoluntarySwitches: every voluntary switch of a
// ping-pong thread is a sleep a wake-up ended, so in each report the
// threads' wake-ups a second, from every waker, stand beside their
// voluntary switches a second. The first report's were 0.91-0.99 of them
// beside two busy loops while the tracer's first interval began before the
// baseline sample; reads after the whole pass, or a jiffy of counts left
// in the kernel, moved single intervals by a few percent more.
func TestBatchWakeupsMatchVoluntarySwitches(t *testing.T) {
	needBPF(t)
	pid, tids := testutil.StartPingPong(t)
	out, err := exec.Command(testutil.Binary(t), "-o", "json", "--wakeups", "-n", "4", "-d", "0.5", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("ctxtop --wakeups: %v", err)
	}
	var woken, switched float64
	for i, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Interval float64 `json:"interval_s"`
			Threads  []struct {
				TID       int     `json:"tid"`
				Voluntary float64 `json:"cswch_per_s"`
			} `json:"threads"`
			wakeupReport
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		if r.Wakeups == nil {
			t.Fatalf("report %d has no wakeups array: %s", i, l)
		}
		var w, v float64
		for _, p := range *r.Wakeups {
			if slices.Contains(tids, p.WakeeTID) {
				w += p.PerSec
			}
		}
		for _, th := range r.Threads {
			if slices.Contains(tids, th.TID) {
				v += th.Voluntary
			}
		}
		if v < 1000 {
			t.Fatalf("report %d: the ping-pong's threads at %.0f voluntary switches/s: %s", i, v, l)
		}
		t.Logf("report %d over %.3f s: %.0f wake-ups/s of the two threads, %.0f voluntary switches/s: %.4f", i, r.Interval, w, v, w/v)
		if w < 0.98*v || w > 1.02*v {
			t.Errorf("report %d: the ping-pong's threads woken %.0f times a second for %.0f voluntary switches (%.3f), want within 2%%", i, w, v, w/v)
		}
		woken += w * r.Interval
		switched += v * r.Interval
	}
	t.Logf("in all: %.0f wake-ups, %.0f voluntary switches: %.4f", woken, switched, woken/switched)
}

// TestBatchWakeupsPIDFilter: with -p, only pairs the process is on.
func TestBatchWakeupsPIDFilter(t *testing.T) {
	needBPF(t)
	pid, _ := testutil.StartPingPong(t)
	out, err := exec.Command(testutil.Binary(t), "-o", "json", "--wakeups", "-n", "1", "-d", "0.5", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("ctxtop --wakeups -p: %v", err)
	}
	var r wakeupReport
	if err := json.Unmarshal(out, &r); err != nil || r.Wakeups == nil {
		t.Fatalf("report %q: %v", out, err)
	}
	if len(*r.Wakeups) < 2 {
		t.Errorf("%d pairs, want at least the ping-pong's two", len(*r.Wakeups))
	}
	var own float64
	for _, p := range *r.Wakeups {
		if p.WakerPID != pid && p.WakeePID != pid {
			t.Errorf("pair %d/%s → %d/%s does not involve process %d", p.WakerTID, p.WakerComm, p.WakeeTID, p.WakeeComm, pid)
		}
		if p.WakerPID == pid && p.WakeePID == pid {
			own += p.PerSec
		}
	}
	// The ping-pong's own wake-ups, summed as the load panel sums a load's.
	var within struct {
		W *struct {
			PerSec float64 `json:"per_s"`
		} `json:"wakeups_within"`
	}
	if err := json.Unmarshal(out, &within); err != nil {
		t.Fatal(err)
	}
	if within.W == nil || own == 0 || math.Abs(within.W.PerSec-own) > 0.01*float64(len(*r.Wakeups)+1) {
		t.Errorf("wakeups_within %+v, want per_s %.2f, the sum of the process's own pairs", within.W, own)
	}
}

// TestBatchWakeupsWithoutPrivilege runs ctxtop as nobody: one line says
// what is missing, and the reports go on without wake-ups.
func TestBatchWakeupsWithoutPrivilege(t *testing.T) {
	stdout, stderr := runAsNobody(t, "-b", "--wakeups", "-n", "1", "-d", "0.2")
	msg := strings.TrimSpace(stderr.String())
	if strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "CAP_BPF") || !strings.Contains(msg, "root") {
		t.Errorf("stderr = %q, want one line naming root and CAP_BPF", msg)
	}
	if !strings.Contains(stdout.String(), "cs/s") || strings.Contains(stdout.String(), "WAKEE") {
		t.Errorf("report without wake-ups expected:\n%s", stdout.String())
	}
}

// TestBatchWakeupsJSONWithoutPrivilege: a JSON report says why it has no
// wake-ups, as the README promises, not just stderr.
func TestBatchWakeupsJSONWithoutPrivilege(t *testing.T) {
	stdout, _ := runAsNobody(t, "-o", "json", "--wakeups", "-n", "1", "-d", "0.2")
	var r struct {
		Wakeups     *[]json.RawMessage `json:"wakeups"`
		Dropped     *uint64            `json:"wakeups_dropped"`
		Unavailable *string            `json:"wakeups_unavailable"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("report %q: %v", stdout.String(), err)
	}
	if r.Unavailable == nil || !strings.Contains(*r.Unavailable, "CAP_BPF") || !strings.Contains(*r.Unavailable, "root") {
		t.Errorf("wakeups_unavailable = %v, want the reason naming root and CAP_BPF", r.Unavailable)
	}
	if r.Wakeups == nil || len(*r.Wakeups) != 0 || r.Dropped != nil {
		t.Errorf("wakeups %v, wakeups_dropped %v: want an empty array and no drop count without the tracer", r.Wakeups, r.Dropped)
	}
}

// runAsNobody runs a copy of the binary as user nobody, which has no
// privilege for BPF, and returns its output.
func runAsNobody(t *testing.T, args ...string) (stdout, stderr bytes.Buffer) {
	t.Helper()
	bin := nobodyBinary(t)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ctxtop %v as nobody: %v\n%s", args, err, stderr.String())
	}
	return stdout, stderr
}

// nobodyBinary is a copy of the binary user nobody can run, in a
// directory root removes at the end; the test is skipped without root.
func nobodyBinary(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a command as nobody")
	}
	// t.TempDir's parent is private to root; nobody must reach the binary.
	dir, err := os.MkdirTemp("", "ctxtop-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "ctxtop")
	src, err := os.ReadFile(testutil.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// bpfProgIDs are the IDs of the BPF programs a process holds, from the
// fdinfo of its link and program descriptors.
func bpfProgIDs(t *testing.T, pid int) []ebpf.ProgramID {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	var ids []ebpf.ProgramID
	for _, fd := range fds {
		target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if target != "anon_inode:bpf_link" && target != "anon_inode:bpf-prog" {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(l, "prog_id:"); ok {
				id, err := strconv.Atoi(strings.TrimSpace(v))
				if err == nil {
					ids = append(ids, ebpf.ProgramID(id))
				}
			}
		}
	}
	return ids
}

// TestWakeupProgramsGoWithTheProcess checks that a signal, even SIGKILL,
// leaves no program attached: links and maps live in file descriptors.
func TestWakeupProgramsGoWithTheProcess(t *testing.T) {
	needBPF(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(testutil.Binary(t), "-b", "--wakeups", "-d", "0.2")
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			r := bufio.NewReader(stdout)
			if _, err := r.ReadString('\n'); err != nil {
				t.Fatalf("no report: %v", err)
			}
			ids := bpfProgIDs(t, cmd.Process.Pid)
			if len(ids) < 3 {
				t.Fatalf("ctxtop --wakeups holds programs %v, want 3", ids)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			go io.Copy(io.Discard, r)
			err = cmd.Wait()
			if sig == syscall.SIGTERM && err != nil {
				t.Errorf("ctxtop after SIGTERM: %v, want a clean exit", err)
			}
			// The kernel frees a program once its last reference is gone,
			// after an RCU grace period.
			deadline := time.Now().Add(5 * time.Second)
			for _, id := range ids {
				for {
					p, err := ebpf.NewProgramFromID(id)
					if errors.Is(err, os.ErrNotExist) {
						break
					}
					if err == nil {
						p.Close()
					}
					if time.Now().After(deadline) {
						t.Errorf("program %d still loaded after ctxtop exited (%v)", id, err)
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// The wake-up graph is recorded with the samples: a replay shows the pairs
// the live run traced, the ping-pong's among them.
func TestRecordedWakeupsReplay(t *testing.T) {
	needBPF(t)
	bin := testutil.Binary(t)
	pid, tids := testutil.StartPingPong(t)
	file := filepath.Join(t.TempDir(), "wakeups.ctxrec")
	if out, err := exec.Command(bin, "record", "--wakeups", "-o", file, "-d", "0.3", "--duration", "1.5",
		"-p", strconv.Itoa(pid)).CombinedOutput(); err != nil {
		t.Fatalf("record --wakeups: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "replay", "-b", "-o", "json", file).Output()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, exitStderr(err))
	}
	seen := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r struct {
			Wakeups []struct {
				WakerTID *int    `json:"waker_tid"`
				WakeeTID int     `json:"wakee_tid"`
				PerSec   float64 `json:"per_s"`
			} `json:"wakeups"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not JSON: %v\n%.200s", err, line)
		}
		for _, w := range r.Wakeups {
			if w.WakerTID != nil && slices.Contains(tids, *w.WakerTID) && slices.Contains(tids, w.WakeeTID) && w.PerSec > 0 {
				seen = true
			}
		}
	}
	if !seen {
		t.Errorf("no ping-pong pair among the replayed wake-ups:\n%.600s", out)
	}
}
