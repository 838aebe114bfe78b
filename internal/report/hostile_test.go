package report

import (
	"bytes"
	"strings"
	"testing"
)

// hostileNames are thread, process and cgroup names any user can give:
// markup, an attribute break-out, a terminal escape.
var hostileNames = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	"\x1b[2J\x1b]0;owned\x07",
}

func TestHostileNamesComeOutEscaped(t *testing.T) {
	in := burstSamples(60, 30, 36)
	for i := range in {
		for j := range in[i].Tasks {
			tk := &in[i].Tasks[j]
			if tk.TID == burstTID {
				tk.Comm = hostileNames[0]
				tk.ProcessComm = hostileNames[1]
			}
			if tk.PID == 1000 {
				tk.Cgroup = "/" + hostileNames[2] + hostileNames[1]
			}
		}
		for j := range in[i].Cgroups {
			if strings.HasPrefix(in[i].Cgroups[j].Path, "/system.slice/svc-1000.") {
				in[i].Cgroups[j].Path = "/" + hostileNames[2] + hostileNames[1]
			}
		}
	}
	path := writeRecording(t, t.TempDir(), "hostile.ctxrec", testHeader(), in)
	r := build(t, path)
	var page bytes.Buffer
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	d := compareFiles(t, path, path)
	var diffPage, text bytes.Buffer
	if err := WriteDiffHTML(&diffPage, d, "test"); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, d); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"report": page.String(), "diff page": diffPage.String()} {
		for _, bad := range []string{"<script>alert", "<img src=x", "onerror=alert(2)>", "\x1b", "\x07"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s holds %q unescaped", name, bad)
			}
		}
		// The diff shows the group: alert(*).
		if !strings.Contains(out, "&lt;script&gt;alert(") {
			t.Errorf("%s does not show the thread's name escaped", name)
		}
		// The page's own scripts: the hover data's and the one script.
		if n := strings.Count(out, "<script"); n > 2 {
			t.Errorf("%s has %d script elements, want at most 2", name, n)
		}
	}
	if strings.ContainsAny(text.String(), "\x1b\x07") {
		t.Error("the text comparison holds a terminal escape")
	}
}
