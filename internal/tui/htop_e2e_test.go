package tui_test

import (
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

// taskStatus is one field of each thread's /proc status, by TID.
func taskStatus(t *testing.T, pid int, field string) map[string]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "status"))
		if err != nil {
			continue // exited meanwhile
		}
		for l := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, field+":"); ok {
				out[e.Name()] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// footer is the pane's last non-empty line.
func footer(p string) string {
	lines := strings.Split(strings.TrimRight(p, "\n"), "\n")
	return lines[len(lines)-1]
}

// sgrClick is a left click at column x, row y (both from 1) as a terminal
// in SGR mouse mode reports it: press, then release.
func sgrClick(x, y int) string {
	return fmt.Sprintf("\x1b[<0;%d;%dM\x1b[<0;%d;%dm", x, y, x, y)
}

// TestHtopHabitsInTmux drives the real binary on a real process: pins it
// to CPU 0, renices it and ends it with SIGTERM from the monitor, checked
// in /proc and with ps; shows the tree at 80x24; sorts and selects with
// raw mouse clicks; and keeps the view across two runs, but not with
// --no-config.
func TestHtopHabitsInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed; this end-to-end test drives the real terminal UI through it")
	}
	if len(taskStatus(t, os.Getpid(), "Cpus_allowed_list")) == 0 {
		t.Fatal("no Cpus_allowed_list in /proc")
	}
	bin := testutil.Binary(t)
	pid, _ := testutil.StartPingPong(t)
	spid := strconv.Itoa(pid)
	cfg := t.TempDir()

	x := startTmux(t, "htop", 80, 24, "sh")
	run := func(args string) {
		x.run("send-keys", "-t", "e2e", "clear; XDG_CONFIG_HOME="+cfg+" "+bin+" -d 0.5 "+args+"; echo EXITED $?", "Enter")
	}
	keys := func(k ...string) { x.run(append([]string{"send-keys", "-t", "e2e"}, k...)...) }
	run("")
	x.waitFor("the workload's rows", contains("pp-ping", "pp-pong", "TOTAL/s"))

	// The workload's process row: the process view filtered by its PID.
	keys("H")
	x.waitFor("the process view", contains("THR"))
	keys("/", spid, "Enter")
	x.waitFor("the filter", contains("/"+spid, " "+spid+" "))
	// Rows of other PIDs that start with the same digits sort after it
	// only by chance: find it by the prompt that names the target.
	keys("a")
	for i := 0; ; i++ {
		p := x.waitFor("the affinity prompt", contains("CPUs for process"))
		if strings.Contains(footer(p), "CPUs for process "+spid+" ") {
			break
		}
		if i == 5 {
			t.Fatalf("no row of process %d found:\n%s", pid, p)
		}
		keys("Escape")
		x.waitFor("the prompt closed", contains("affinity unchanged"))
		keys("Down", "a")
	}
	keys("0", "Enter")
	p := x.waitFor("the affinity applied", contains("now run on CPUs 0"))
	if f := footer(p); !strings.Contains(f, "process "+spid) {
		t.Errorf("footer %q does not name the process", f)
	}
	for tid, cpus := range taskStatus(t, pid, "Cpus_allowed_list") {
		if cpus != "0" {
			t.Errorf("thread %s: Cpus_allowed_list %q after affinity 0 from the monitor, want 0", tid, cpus)
		}
	}
	if out, err := exec.Command("taskset", "-cp", spid).Output(); err == nil && !strings.HasSuffix(strings.TrimSpace(string(out)), ": 0") {
		t.Errorf("taskset -cp %s: %q, want current affinity list 0", spid, out)
	}

	keys("F8")
	x.waitFor("the renice", contains("nice 0 → 1"))
	out, err := exec.Command("ps", "-o", "ni=", "-p", spid).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "1" {
		t.Errorf("ps -o ni after F8: %q, want 1", got)
	}

	keys("F9")
	x.waitFor("the signal picker", contains("send SIGTERM to process "+spid))
	if _, err := os.Stat("/proc/" + spid); err != nil {
		t.Fatalf("the process is gone before the confirmation: %v", err)
	}
	keys("Enter")
	x.waitFor("the signal sent", contains("sent SIGTERM to process "+spid))
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Ended: a zombie until the test reaps it, or reaped already.
		b, err := os.ReadFile("/proc/" + spid + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs 10 s after SIGTERM: %s", pid, b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// The tree at 80x24, on the whole host.
	keys("Escape")
	x.waitFor("the filter cleared", func(p string) bool { return !strings.Contains(p, "/"+spid) })
	keys("F5")
	p = x.waitFor("the tree", func(p string) bool {
		return strings.Contains(p, " tree") && strings.Contains(p, "▾ ") && (strings.Contains(p, "├ ") || strings.Contains(p, "└ "))
	})
	checkFits(t, p, 80, 24)

	// Mouse: a click on PID's title sorts by it; a second reverses it.
	lines := strings.Split(p, "\n")
	head := -1
	for i, l := range lines {
		if strings.Contains(l, "TOTAL/s") && strings.Contains(l, "PID") {
			head = i
		}
	}
	if head < 0 {
		t.Fatalf("no table title line:\n%s", p)
	}
	col := strings.Index(lines[head], "PID") + 1
	keys("-l", sgrClick(col, head+1))
	x.waitFor("the sort by PID after a click", contains("▲PID"))
	keys("-l", sgrClick(col, head+1))
	x.waitFor("PID reversed after a second click", contains("▼PID"))
	// A click on the third row selects it: F9 then names that row.
	p = x.pane()
	row := strings.Split(p, "\n")[head+3]
	f := strings.Fields(row)
	keys("-l", sgrClick(20, head+4))
	keys("F9")
	p = x.waitFor("the picker on the clicked row", contains("send SIGTERM to"))
	if want := f[0]; !strings.Contains(footer(p), " "+want+" ") && !strings.Contains(footer(p), "(of "+want+")") {
		t.Errorf("clicked row %q, but the picker names %q", row, footer(p))
	}
	keys("Escape")
	x.waitFor("no signal sent", contains("no signal sent"))

	keys("q")
	x.waitFor("the exit", contains("EXITED 0"))
	saved, err := os.ReadFile(filepath.Join(cfg, "ctxtop", "settings.json"))
	if err != nil {
		t.Fatalf("no settings after quitting: %v", err)
	}
	for _, want := range []string{`"tree": true`, `"sort": "PID"`, `"reverse": true`} {
		if !strings.Contains(string(saved), want) {
			t.Errorf("settings lack %s:\n%s", want, saved)
		}
	}

	// The next run starts where this one ended.
	run("")
	x.waitFor("the kept view", contains("▼PID", " tree"))
	keys("q")
	x.waitFor("the second exit", contains("EXITED 0"))

	// --no-config neither reads nor writes them.
	run("--no-config")
	p = x.waitFor("the default view", contains("▼TOTAL/s"))
	if strings.Contains(p, " tree") || strings.Contains(p, "▼PID") {
		t.Errorf("--no-config read the saved view:\n%s", p)
	}
	keys("g", "r")
	x.waitFor("grouped", contains("grouped"))
	keys("q")
	x.waitFor("the third exit", contains("EXITED 0"))
	after, err := os.ReadFile(filepath.Join(cfg, "ctxtop", "settings.json"))
	if err != nil || string(after) != string(saved) {
		t.Errorf("--no-config changed the settings:\nbefore %s\nafter %s (%v)", saved, after, err)
	}

	// A corrupt file: one warning line, the defaults, no crash.
	if err := os.WriteFile(filepath.Join(cfg, "ctxtop", "settings.json"), []byte("{junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	x.run("send-keys", "-t", "e2e", "clear; XDG_CONFIG_HOME="+cfg+" "+bin+" -d 0.5 2>"+cfg+"/err; echo EXITED $?", "Enter")
	x.waitFor("the monitor despite the corrupt file", contains("▼TOTAL/s"))
	keys("q")
	x.waitFor("the fourth exit", contains("EXITED 0"))
	msg, _ := os.ReadFile(cfg + "/err")
	if n := strings.Count(strings.TrimSpace(string(msg)), "\n"); n != 0 || !strings.Contains(string(msg), "ignoring the saved view") {
		t.Errorf("a corrupt settings file: stderr %q, want one warning line", msg)
	}
}
