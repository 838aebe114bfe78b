package sampler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
)

// A /proc/stat that turns malformed mid-run does not end the run: the pass
// reads the threads, says why the host counters are missing, and the next
// good stat brings them back.
func TestMalformedStatMidRunIsSaidNotFatal(t *testing.T) {
	root := copyTree(t, fixture)
	stat := filepath.Join(root, "stat")
	good, err := os.ReadFile(stat)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Root: root, NoTaskIter: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var smp model.Sample
	for i, c := range []struct {
		stat       string
		wantUnread bool
	}{{string(good), false}, {"cpu  1 2 3\nctxt twelve\n", true}, {string(good), false}} {
		if err := os.WriteFile(stat, []byte(c.stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := s.Sample(&smp); err != nil {
			t.Fatalf("pass %d: Sample = %v, want the pass to go on", i, err)
		}
		if got := smp.System.Unread != ""; got != c.wantUnread {
			t.Errorf("pass %d: Unread = %q, want set: %v", i, smp.System.Unread, c.wantUnread)
		}
		if c.wantUnread && (smp.System.ContextSwitches != 0 || !strings.Contains(smp.System.Unread, "ctxt")) {
			t.Errorf("pass %d: ctxt %d, Unread %q: want 0 and why", i, smp.System.ContextSwitches, smp.System.Unread)
		}
		if !c.wantUnread && smp.System.ContextSwitches == 0 {
			t.Errorf("pass %d: no ctxt from a good stat", i)
		}
		if len(smp.Tasks) == 0 {
			t.Errorf("pass %d: no threads read", i)
		}
	}
}
