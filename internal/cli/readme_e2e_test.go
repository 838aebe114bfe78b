package cli_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxtop/ctxtop/internal/hostinfo"
	"github.com/ctxtop/ctxtop/internal/record"
	"github.com/ctxtop/ctxtop/internal/record/recordtest"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// skippedExamples are the example commands that cannot run unattended
// here, by prefix, and why. Commands that open the monitor need no entry:
// with stdout not a terminal they print batch reports, which is what runs.
var skippedExamples = map[string]string{
	"ctxtop serve": "an exporter serves until it is stopped; serve_e2e_test.go runs it",
	"ctxtop bench": "every mode and pinning with its settling time: 14 s a run even at --duration 0.05, a minute for the five",
}

// example is one command a user may copy, and where it is written.
type example struct{ where, line string }

// TestExamplesRun runs every ctxtop command in README.md's code blocks and
// in each command's --help Examples, the way a user pastes them, and fails
// on any that exits non-zero. So the runs end unattended, in a second or
// so each and the same way on any host, however busy: a recording an
// example reads is made up (an incident around 10:20, as the README's
// window expects), and bound() adds bounds and names the input.
func TestExamplesRun(t *testing.T) {
	bin := testutil.Binary(t)
	pid := strconv.Itoa(busySelf(t))
	var examples []example
	for _, doc := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), doc))
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, readmeExamples(doc, string(text))...)
	}
	examples = append(examples, helpExamples(t, bin)...)
	if len(examples) < 20 {
		t.Fatalf("found %d examples; the extraction is broken:\n%q", len(examples), examples)
	}
	fixture := filepath.Join(testutil.RepoRoot(), "testdata", "proc")
	deadline := time.Now().Add(90 * time.Second)
	ran := 0
	for _, ex := range examples {
		if why := skipReason(ex.line); why != "" {
			t.Logf("skipped %s: %q: %s", ex.where, ex.line, why)
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("the examples took over 90 s; %d ran", ran)
		}
		dir := t.TempDir()
		for _, f := range readFiles(ex.line) {
			if err := incidentRecording(filepath.Join(dir, f)); err != nil {
				t.Fatal(err)
			}
		}
		script := bound(ex.line, bin, pid, fixture)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", script)
		cmd.Dir = dir
		began := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		ran++
		t.Logf("%s: %q: %s", ex.where, ex.line, time.Since(began).Round(10*time.Millisecond))
		if err != nil {
			t.Errorf("%s: %q failed: %v\nran: %s\n%.2000s", ex.where, ex.line, err, script, out)
		}
	}
}

// docFiles are README.md and every page under docs/, whose examples a
// user copies alike.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(testutil.RepoRoot(), "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	out := []string{"README.md"}
	for _, d := range docs {
		out = append(out, filepath.Join("docs", filepath.Base(d)))
	}
	return out
}

// readmeExamples are the lines of a page's fenced blocks that run ctxtop,
// with a "$ " prompt or a "# comment" taken off; doc names the page.
func readmeExamples(doc, readme string) []example {
	var out []example
	fenced, shown := false, false
	for i, line := range strings.Split(readme, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, "```") {
			// A ```text block is what a screen or a report showed,
			// whose header line starts with "ctxtop" too.
			fenced, shown = !fenced, !fenced && strings.TrimPrefix(l, "```") == "text"
			continue
		}
		l = strings.TrimPrefix(l, "$ ")
		if !fenced || shown || (l != "ctxtop" && !strings.HasPrefix(l, "ctxtop ") && !strings.HasPrefix(l, "sudo ctxtop ")) {
			continue
		}
		if j := unquoted(l, " #"); j >= 0 {
			l = l[:j]
		}
		out = append(out, example{doc + ":" + strconv.Itoa(i+1), strings.TrimSpace(l)})
	}
	return out
}

// helpExamples are the Examples of ctxtop --help and of each command's,
// a description after two spaces or more taken off.
func helpExamples(t *testing.T, bin string) []example {
	t.Helper()
	help := func(args ...string) string {
		out, err := exec.Command(bin, append(args, "--help")...).Output()
		if err != nil {
			t.Fatalf("%v --help: %v", args, err)
		}
		return string(out)
	}
	root := help()
	cmds := [][]string{nil}
	_, list, _ := strings.Cut(root, "Available Commands:\n")
	for line := range strings.SplitSeq(list, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			break
		}
		cmds = append(cmds, f[:1])
	}
	var out []example
	for _, c := range cmds {
		text := root
		if c != nil {
			text = help(c...)
		}
		_, ex, ok := strings.Cut(text, "Examples:\n")
		if !ok {
			continue
		}
		ex, _, _ = strings.Cut(ex, "\n\n")
		for line := range strings.SplitSeq(ex, "\n") {
			l := strings.TrimSpace(line)
			if j := unquoted(l, "  "); j >= 0 {
				l = l[:j]
			}
			out = append(out, example{strings.Join(append([]string{"ctxtop"}, append(c, "--help")...), " "), l})
		}
	}
	return out
}

// unquoted is the index of the first sep in s outside shell quotes, or -1.
func unquoted(s, sep string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch {
		case quote != 0:
			if s[i] == quote {
				quote = 0
			}
		case s[i] == '\'' || s[i] == '"':
			quote = s[i]
		case strings.HasPrefix(s[i:], sep):
			return i
		}
	}
	return -1
}

func skipReason(line string) string {
	for prefix, why := range skippedExamples {
		if line == prefix || strings.HasPrefix(line, prefix+" ") {
			return why
		}
	}
	if strings.HasPrefix(line, "sudo ") && os.Geteuid() != 0 {
		return "needs root"
	}
	return ""
}

var (
	pidArg = regexp.MustCompile(`(-p|--pid)[ =][0-9,]+`)
	// recordingArg is a recording the command names.
	recordingArg = regexp.MustCompile(`\S+\.ctxrec\b`)
	outputArg    = regexp.MustCompile(`(-o|--output|--record)[ =](\S+\.ctxrec)\b`)
)

// readFiles are the recordings a command reads: those it names other than
// as the file to write.
func readFiles(line string) []string {
	written := map[string]bool{}
	for _, m := range outputArg.FindAllStringSubmatch(line, -1) {
		written[m[2]] = true
	}
	var out []string
	for _, f := range recordingArg.FindAllString(line, -1) {
		if !written[f] {
			out = append(out, f)
		}
	}
	return out
}

// bound turns an example into a script that ends soon: ctxtop is the binary
// under test; a live report comes every 0.2 s, two of them unless -n says;
// record runs a second, load 0.3 s; -p names pid, and a command sampling
// the whole host samples the fixture procfs instead, whose few tasks take
// no time to read (a shared host's tens of thousands take seconds). Later
// flags win, so the example's own values stay where they bound the run.
func bound(line, bin, pid, fixture string) string {
	line = strings.TrimPrefix(line, "sudo ")
	line = pidArg.ReplaceAllString(line, "$1 "+pid)
	head, tail := line, ""
	if i := unquoted(line, "|"); i >= 0 {
		head, tail = strings.TrimSpace(line[:i]), " "+line[i:]
	}
	if strings.HasSuffix(head, " &") && !strings.HasSuffix(head, "&&") {
		// Started in the background, as a load beside a recorder is.
		head, tail = strings.TrimSpace(strings.TrimSuffix(head, "&")), " &"+tail
	}
	args := strings.Fields(head)[1:]
	sub := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		sub = args[0]
	}
	has := func(flag string) bool { return regexp.MustCompile(`(^|\s)` + flag + `(\s|=|$)`).MatchString(head) }
	var extra []string
	if (sub == "" || sub == "record") && !has("-p") && !has("--pid") && !has("--proc") && !has("--info") && !has("--replay") {
		extra = append(extra, "--proc", "'"+fixture+"'")
	}
	switch sub {
	case "":
		extra = append(extra, "-d", "0.2")
		if !has("-n") && !has("--iterations") {
			extra = append(extra, "-n", "2")
		}
	case "record":
		if !has("--info") {
			extra = append(extra, "-d", "0.2", "--duration", "1s")
		}
	case "load":
		extra = append(extra, "--duration", "0.3")
	}
	head = "'" + bin + "'" + strings.TrimPrefix(head, "ctxtop")
	if len(extra) > 0 {
		head += " " + strings.Join(extra, " ")
	}
	return head + tail
}

// incidentRecording writes a made-up incident to path: 10:14 to 10:30 UTC,
// a sample every 10 s, a storm in the middle. Started minutes before the
// README's window, as a recorder is, so +5m counted from the start would
// end the window before it opens.
func incidentRecording(path string) error {
	start := time.Date(2026, 3, 1, 10, 14, 0, 0, time.UTC)
	h := record.Header{Facts: hostinfo.Facts{Hostname: "example-host", Kernel: "6.1.0-test"}, CPUs: 2, CtxtopVersion: "test", Interval: 10 * time.Second,
		ProcRoot: "/proc", HotThreshold: 1000, Start: start, ZoneName: "UTC"}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := record.NewWriter(f, h, record.WriterOptions{})
	if err != nil {
		return err
	}
	s := recordtest.New(40, 5, true)
	s.StormFrom, s.StormTo = 40, 50
	for i := range 97 {
		smp := s.Next()
		smp.Time = start.Add(time.Duration(i) * 10 * time.Second)
		if err := w.Write(&smp); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// TestReadmeBadInputIsRefused runs the flags the docs' bad-input sentence
// names (docs/batch.md), in code, and checks each is refused in one line
// with exit 1: the sentence once listed -n 0, which is "until interrupted"
// and ran on.
func TestReadmeBadInputIsRefused(t *testing.T) {
	bin := testutil.Binary(t)
	readme, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "batch.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(readme), "\nBad input (")
	if !ok {
		t.Fatal("docs/batch.md has no \"Bad input (\" sentence")
	}
	para, _, _ = strings.Cut(para, ")")
	// A flag with its value; a flag named alone (`-p`) is not an example.
	spans := regexp.MustCompile("`(-[^` ]+ [^`]+)`").FindAllStringSubmatch(para, -1)
	if len(spans) == 0 {
		t.Fatalf("no flag in code in the bad-input list: %q", para)
	}
	for _, sp := range spans {
		args := append([]string{"-b", "-d", "0.1", "--proc", filepath.Join(testutil.RepoRoot(), "testdata", "proc")}, strings.Fields(sp[1])...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		killed := ctx.Err() != nil
		cancel()
		if killed {
			t.Errorf("README lists %q as bad input, but ctxtop %q ran on until killed", sp[1], args)
			continue
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || strings.Count(string(out), "\n") != 1 {
			t.Errorf("README lists %q as bad input; ctxtop %q: %v\n%s", sp[1], args, err, out)
		}
	}
}
