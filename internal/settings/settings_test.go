package settings

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ctxtop")
	want := Settings{View: "processes", Tree: true, Grouped: true, Sort: "%CPU", Reverse: true, Interval: "500ms", Filter: "pp-",
		Hidden: map[string][]string{"threads": {"MIGR/s", "CPUS"}, "cgroups": {"LIMIT"}}}
	if err := Save(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if got.IntervalDuration() != 500*time.Millisecond {
		t.Errorf("interval %v, want 500ms", got.IntervalDuration())
	}
	// Saved again over the first: no temporary file is left beside it.
	if err := Save(dir, Settings{}); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != File {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v, want only %s", names, File)
	}
}

// A column a later version dropped, or a row kind it does not know, is
// not this version's to refuse: Load keeps them, the table ignores them.
func TestLoadKeepsUnknownColumns(t *testing.T) {
	dir := t.TempDir()
	content := `{"hidden_columns": {"threads": ["GONE/s", "CPUS"], "sockets": ["X"]}}`
	if err := os.WriteFile(filepath.Join(dir, File), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir)
	if err != nil {
		t.Fatalf("Load of unknown column names: %v", err)
	}
	if diff := cmp.Diff([]string{"GONE/s", "CPUS"}, s.Hidden["threads"]); diff != "" {
		t.Errorf("hidden threads columns (-want +got):\n%s", diff)
	}
}

func TestEqualTakesNoListForAnEmptyOne(t *testing.T) {
	a := Settings{Sort: "PID"}
	b := Settings{Sort: "PID", Hidden: map[string][]string{"threads": {}}}
	if !a.Equal(b) {
		t.Errorf("%+v and %+v differ, want equal", a, b)
	}
	b.Hidden["threads"] = []string{"CPUS"}
	if a.Equal(b) {
		t.Errorf("%+v and %+v equal, want different", a, b)
	}
	if a.Equal(Settings{Sort: "PID", Reverse: true}) {
		t.Errorf("Equal ignores Reverse")
	}
}

func TestLoadMissingIsDefaults(t *testing.T) {
	s, err := Load(filepath.Join(t.TempDir(), "none"))
	if err != nil || !s.Equal(Settings{}) {
		t.Errorf("Load of a missing file: %+v, %v; want defaults, no error", s, err)
	}
}

func TestLoadRefusesWhatIsNotSettings(t *testing.T) {
	for name, content := range map[string]string{
		"junk":           "\x00\x01 not json",
		"truncated":      `{"view": "proc`,
		"bad view":       `{"view": "everything"}`,
		"bad interval":   `{"interval": "-3s"}`,
		"short interval": `{"interval": "1ms"}`,
		"wrong type":     `{"tree": "yes"}`,
		"huge":           `{"filter": "` + strings.Repeat("x", maxSize) + `"}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, File), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Load(dir)
		if err == nil {
			t.Errorf("%s: Load accepted %q as %+v", name, content[:min(len(content), 40)], s)
			continue
		}
		if !s.Equal(Settings{}) {
			t.Errorf("%s: Load returned %+v with its error; want the defaults", name, s)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: the error is not one line: %q", name, err)
		}
	}
}

func TestLoadRefusesAFIFOWithoutWaiting(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, File), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("Load of a FIFO: %v; want it refused as not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Load of a FIFO still waits after 5 s")
	}
}

func TestDirFollowsXDG(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/somewhere/cfg")
	if got := Dir(); got != "/somewhere/cfg/ctxtop" {
		t.Errorf("Dir() = %q with XDG_CONFIG_HOME set", got)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/oncall")
	if got := Dir(); got != "/home/oncall/.config/ctxtop" {
		t.Errorf("Dir() = %q with only HOME set", got)
	}
}
