package sampler

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// sink keeps what gcStart allocates from being optimised away.
var sink [][]byte

// TestQuietStartLeavesNoCycleToThePasses: a start's burst of allocation
// under the start's GOGC leaves the heap over the restored GOGC's
// trigger; the cycle it owes ran during the monitor's next passes (a
// peek it ended in cost 11-14 ms of CPU at 10,000 threads, one it did
// not end in 3).
// After restore, a few passes' worth of allocation (1 MB) must end no
// cycle: restore has run it.
func TestQuietStartLeavesNoCycleToThePasses(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: the start leaves the collector alone")
	}
	runtime.GC()
	live := make([][]byte, 0, 512)
	for range 512 {
		live = append(live, make([]byte, 4096)) // 2 MB kept, as a sampler's records
	}
	restore := QuietStartGC()
	var st runtime.MemStats
	runtime.ReadMemStats(&st)
	// A start's garbage: as much as the heap's live part and more, short
	// of the raised goal so that no cycle runs within the burst.
	for st.HeapAlloc < st.NextGC*3/5 {
		sink = append(sink[:0], make([]byte, 64<<10))
		runtime.ReadMemStats(&st)
	}
	cycles := st.NumGC
	restore()
	runtime.ReadMemStats(&st)
	started := st.NumGC
	for range 256 {
		sink = append(sink[:0], make([]byte, 4096))
	}
	time.Sleep(100 * time.Millisecond) // a cycle started ends meanwhile
	runtime.ReadMemStats(&st)
	if st.NumGC != started {
		t.Errorf("%d garbage collections ended in the passes after the start (%d in the start), want none", st.NumGC-started, started-cycles)
	}
	runtime.KeepAlive(live)
}
