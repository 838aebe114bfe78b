package sampler

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/testutil"
)

// voluntaryNow is a thread's voluntary switches as /proc has them now.
func voluntaryNow(t *testing.T, tid int) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "voluntary_ctxt_switches:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no voluntary_ctxt_switches in %s's status", strconv.Itoa(tid))
	return 0
}

// TestAfterReadComesOncePerPassAfterTheCounters: the wake-up tracer's read
// goes in AfterRead so that it ends the same time as the threads'
// counters; it must come once a pass, after a busy thread's counters were
// read (the sample's count is no later than one taken in AfterRead), and
// before the pass ends, on the walk and on the /proc path alike.
func TestAfterReadComesOncePerPassAfterTheCounters(t *testing.T) {
	pid, tids := testutil.StartPingPong(t)
	for _, tc := range []struct {
		name   string
		noIter bool
		source string
	}{
		{"walk", false, SourceTaskIter},
		{"proc", true, SourceProc},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			var atHook uint64
			s := newSampler(t, Config{Root: "/proc", PIDs: []int{pid}, NoTaskIter: tc.noIter, AfterRead: func() {
				calls++
				atHook = voluntaryNow(t, tids[0])
			}})
			if s.Source() != tc.source {
				t.Skipf("the %s path does not serve here: %s", tc.name, s.SourceNote())
			}
			var dst model.Sample
			for pass := range 3 {
				calls = 0
				mustSample(t, s, &dst)
				after := voluntaryNow(t, tids[0])
				if calls != 1 {
					t.Errorf("pass %d: AfterRead called %d times, want once", pass, calls)
				}
				var got uint64
				for _, c := range dst.Tasks {
					if c.TID == tids[0] {
						got = c.VoluntarySwitches
					}
				}
				if got == 0 || got > atHook || atHook > after {
					t.Errorf("pass %d: the sample counted %d voluntary switches of pp-ping, AfterRead saw %d, the end of the pass %d: want them in that order", pass, got, atHook, after)
				}
			}
		})
	}
}
