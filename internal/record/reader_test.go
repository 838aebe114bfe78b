package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// sparse writes head at the start of a file of size bytes, the rest a
// hole: big to read, free to make.
func sparse(t *testing.T, head []byte, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, head, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	return path
}

// costOf runs f and returns the bytes it allocated and, where the kernel
// counts them, the bytes this process read meanwhile (-1 if not).
func costOf(t *testing.T, f func()) (alloc, read int64) {
	t.Helper()
	rchar := func() int64 {
		b, err := os.ReadFile("/proc/self/io")
		if err != nil {
			return -1
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "rchar: "); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err == nil {
					return n
				}
			}
		}
		return -1
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r0 := rchar()
	f()
	r1 := rchar()
	runtime.ReadMemStats(&after)
	read = -1
	if r0 >= 0 && r1 >= 0 {
		read = r1 - r0
	}
	return int64(after.TotalAlloc - before.TotalAlloc), read
}

// TestOpenChecksTheMagicBeforeReading: a big file that is not a
// recording is refused from its first bytes, not read whole into memory.
func TestOpenChecksTheMagicBeforeReading(t *testing.T) {
	const size = 64 << 20
	path := sparse(t, []byte("#!/bin/sh\necho this is not a recording\n"), size)
	var err error
	alloc, read := costOf(t, func() {
		var r *Recording
		if r, err = Open(path); err == nil {
			r.Close()
		}
	})
	if !errors.Is(err, ErrNotRecording) {
		t.Errorf("Open: %v, want ErrNotRecording", err)
	}
	if alloc > 1<<20 {
		t.Errorf("refusing a %d MiB file that is not a recording allocated %d bytes", size>>20, alloc)
	}
	if read > 1<<20 {
		t.Errorf("refusing a %d MiB file that is not a recording read %d bytes", size>>20, read)
	}
}

// TestOpenStreams: a recording followed by a long run of junk is read a
// window at a time, what can be replayed kept, memory bounded by a chunk
// and the index, not by the file's size.
func TestOpenStreams(t *testing.T) {
	const size = 64 << 20
	data := record(t, recordtest.Run(40, 5, 30, true), WriterOptions{})
	path := sparse(t, data, size)
	var r *Recording
	var err error
	alloc, _ := costOf(t, func() { r, err = Open(path) })
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if alloc > 4<<20 {
		t.Errorf("opening a %d MiB file with a %d-byte recording in it allocated %d bytes", size>>20, len(data), alloc)
	}
	if diff := cmp.Diff(30, r.Samples()); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "damaged data at byte "+strconv.Itoa(len(data))) {
		t.Errorf("notes %q, want one naming the junk after byte %d", r.Notes, len(data))
	}
	// Played from the file, the frames are those Parse reads from memory.
	mem, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range mem.frames {
		a, err := mem.frameBytes(i)
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.frameBytes(i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Fatalf("frame %d differs read from the file", i)
		}
	}
}

// TestMarkerAcrossWindowsIsFound: damage is skipped to the next chunk
// marker even when the marker straddles two of nextSync's windows.
func TestMarkerAcrossWindowsIsFound(t *testing.T) {
	data := record(t, recordtest.Run(40, 5, 30, true), WriterOptions{KeyframeEvery: 1})
	offs := chunkOffsets(t, data)
	for _, split := range []int{0, 1, 2, 3, 4} {
		// Junk before the second chunk puts its marker split bytes
		// before a window's end, counting from where the first chunk
		// ends; the first byte of junk is damage.
		junk := bytes.Repeat([]byte{0x55}, syncWindow-len(chunkSync)+1+split)
		b := append(append(bytes.Clone(data[:offs[1]]), junk...), data[offs[1]:]...)
		r, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if r.Samples() != 30 {
			t.Errorf("split %d: %d samples of 30 read past %d junk bytes; notes %q", split, r.Samples(), len(junk), r.Notes)
		}
	}
}
