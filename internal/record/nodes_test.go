package record

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// node is a file system node a recording must neither replace nor read.
type node struct {
	name string
	make func(path string) error
}

// nodes are a FIFO, a directory and, as root, a character device (the
// kernel's /dev/null, 1:3).
func nodes(t *testing.T) []node {
	ns := []node{
		{"FIFO", func(p string) error { return unix.Mkfifo(p, 0o644) }},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	}
	if os.Geteuid() == 0 {
		ns = append(ns, node{"character device", func(p string) error {
			return unix.Mknod(p, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3)))
		}})
	} else {
		t.Log("not root: no character device to try")
	}
	return ns
}

// identity is what must not change about a node: its inode, type and
// device number.
func identity(t *testing.T, path string) [3]uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return [3]uint64{st.Ino, uint64(st.Mode), st.Rdev}
}

// identityNow is identity for an assertion: zero when the node is gone.
func identityNow(path string) [3]uint64 {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return [3]uint64{}
	}
	return [3]uint64{st.Ino, uint64(st.Mode), st.Rdev}
}

// TestCreateNeverReplacesADeviceOrFIFO: with or without Overwrite, a
// recording at a device, FIFO or directory, or a ring with one among its
// parts, is refused with ErrNotFile, and the node and the ring's other
// parts are left as they were.
func TestCreateNeverReplacesADeviceOrFIFO(t *testing.T) {
	for _, n := range nodes(t) {
		for _, part := range []string{"", ".2"} {
			for _, overwrite := range []bool{false, true} {
				dir := t.TempDir()
				path := filepath.Join(dir, "r.ctxrec")
				if err := n.make(path + part); err != nil {
					t.Fatal(err)
				}
				if part != "" {
					if err := os.WriteFile(path+".1", []byte("an older part"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				before := identity(t, path+part)
				o := FileOptions{Path: path, Header: testHeader(), Overwrite: overwrite, Rotate: 3, Writer: WriterOptions{MaxSize: 1 << 20}}
				r, err := Create(o)
				if !errors.Is(err, ErrNotFile) {
					t.Errorf("%s at %s, overwrite %v: Create error %v, want ErrNotFile", n.name, filepath.Base(path+part), overwrite, err)
				}
				if r != nil {
					r.Close()
				}
				if diff := cmp.Diff(before, identityNow(path+part)); diff != "" {
					t.Errorf("%s at %s, overwrite %v: the node changed (-want +got):\n%s", n.name, filepath.Base(path+part), overwrite, diff)
				}
				if part != "" {
					if b, _ := os.ReadFile(path + ".1"); string(b) != "an older part" {
						t.Errorf("%s at %s, overwrite %v: %s.1 now holds %.20q", n.name, part, overwrite, filepath.Base(path), b)
					}
				}
			}
		}
	}
}

// TestRotationNeverReplacesANodePutInItsWay: a FIFO put where a ring's
// rotation renames a file, after Create claimed the names, stops the
// recording with ErrNotFile and is left as it was: at FILE.1 (renamed
// down the ring), or at FILE itself with one file kept (the new file
// renamed over it), with no temporary file left.
func TestRotationNeverReplacesANodePutInItsWay(t *testing.T) {
	for _, tc := range []struct {
		rotate int
		at     string
	}{{2, ".1"}, {1, ""}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "r.ctxrec")
		r, err := Create(FileOptions{Path: path, Header: testHeader(), Rotate: tc.rotate, Writer: WriterOptions{MaxSize: 4 << 10, FlushEvery: time.Nanosecond}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(path + tc.at); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if err := unix.Mkfifo(path+tc.at, 0o644); err != nil {
			t.Fatal(err)
		}
		before := identity(t, path+tc.at)
		var werr error
		for _, s := range recordtest.Run(40, 5, 400, false) {
			if werr = r.Write(&s); werr != nil {
				break
			}
		}
		r.Close()
		if !errors.Is(werr, ErrNotFile) {
			t.Errorf("rotate %d, FIFO at r.ctxrec%s: Write error %v, want ErrNotFile", tc.rotate, tc.at, werr)
		}
		if diff := cmp.Diff(before, identityNow(path+tc.at)); diff != "" {
			t.Errorf("rotate %d: the FIFO changed (-want +got):\n%s", tc.rotate, diff)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
			t.Errorf("rotate %d: temporary files left: %q", tc.rotate, left)
		}
	}
}

// TestOpenRefusesAFIFOAtOnce: opening a FIFO with no writer blocks, so
// Open must refuse it without a plain open, within a second.
func TestOpenRefusesAFIFOAtOnce(t *testing.T) {
	for _, n := range nodes(t) {
		path := filepath.Join(t.TempDir(), "r.ctxrec")
		if err := n.make(path); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			r, err := Open(path)
			if err == nil {
				r.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotFile) {
				t.Errorf("%s: Open error %v, want ErrNotFile", n.name, err)
			}
		case <-time.After(5 * time.Second):
			// Unblock the open so the test ends.
			if f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			t.Errorf("%s: Open still blocked after 5 s", n.name)
		}
	}
}

// TestKeptCountsTheFilesLeft: after rotations, Kept is what the ring's
// files hold and the newest alone, not all that was written.
func TestKeptCountsTheFilesLeft(t *testing.T) {
	for _, rotate := range []int{1, 2, 3} {
		dir := t.TempDir()
		path := filepath.Join(dir, "ring.ctxrec")
		o := FileOptions{Path: path, Header: testHeader(), Rotate: rotate, Writer: WriterOptions{MaxSize: 4 << 10, FlushEvery: time.Nanosecond}}
		r, err := writeAll(t, o, 200)
		if err != nil {
			t.Fatal(err)
		}
		if r.Rotations < rotate+1 {
			t.Fatalf("rotate %d: %d rotations; the test needs a full ring", rotate, r.Rotations)
		}
		onDisk := map[string]int{}
		names, _ := filepath.Glob(path + "*")
		for _, n := range names {
			rec, err := Open(n)
			if err != nil {
				t.Fatal(err)
			}
			onDisk[filepath.Base(n)] = rec.Samples()
			rec.Close()
		}
		sum := 0
		for _, n := range onDisk {
			sum += n
		}
		kept, newest := r.Kept()
		if diff := cmp.Diff([2]int{sum, onDisk["ring.ctxrec"]}, [2]int{kept, newest}); diff != "" {
			t.Errorf("rotate %d, files %v: kept and newest (-on disk +said):\n%s", rotate, onDisk, diff)
		}
		if kept >= r.Samples() {
			t.Errorf("rotate %d: kept %d of %d samples written; the ring dropped none", rotate, kept, r.Samples())
		}
	}
}

// TestFirstSizeIsTheFirstChunksEnd: FirstSize is where the first sample's
// chunk ends in a file the recorder writes, whatever cap the options had.
func TestFirstSizeIsTheFirstChunksEnd(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "free.ctxrec")
	if _, err := writeAll(t, FileOptions{Path: path, Header: testHeader()}, 2); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	offs := chunkOffsets(t, data)
	first := recordtest.Run(40, 5, 1, false)[0]
	got, err := FirstSize(testHeader(), &first, WriterOptions{MaxSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(int64(offs[1]), got); diff != "" {
		t.Errorf("FirstSize (-the first chunk's end +got):\n%s", diff)
	}
}

// TestStreamIsWrittenInWholeChunks: a stream is never claimed, renamed or
// removed, and cut at any byte it parses to the samples of its whole
// chunks before the cut.
func TestStreamIsWrittenInWholeChunks(t *testing.T) {
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stream"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// A file where the stream's name would be: untouched.
	if err := os.WriteFile(filepath.Join(dir, "-"), []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := FileOptions{Path: filepath.Join(dir, "-"), Stream: out, Header: testHeader(), Writer: WriterOptions{FlushEvery: 3 * time.Second}}
	r, err := Create(o)
	if err != nil {
		t.Fatal(err)
	}
	samples := recordtest.Run(40, 5, 30, false)
	for i := range samples {
		if err := r.Write(&samples[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "-")); string(b) != "precious" {
		t.Errorf("the file at the stream's name now holds %.20q", b)
	}
	data, err := os.ReadFile(filepath.Join(dir, "stream"))
	if err != nil {
		t.Fatal(err)
	}
	offs := chunkOffsets(t, data)
	// Samples in whole chunks up to each chunk's end: the first two
	// alone, then one chunk per FlushEvery.
	whole := map[int]int{}
	for i := 1; i < len(offs); i++ {
		rec, err := Parse(data[:offs[i]])
		if err != nil {
			t.Fatalf("cut at the end of chunk %d: %v", i, err)
		}
		whole[offs[i]] = rec.Samples()
	}
	whole[len(data)] = len(samples)
	for cut := offs[1]; cut <= len(data); cut++ {
		// The whole chunks before the cut.
		want := 0
		for end, n := range whole {
			if end <= cut && n > want {
				want = n
			}
		}
		rec, err := Parse(data[:cut])
		if err != nil {
			t.Errorf("cut at byte %d: %v", cut, err)
			continue
		}
		if rec.Samples() != want {
			t.Errorf("cut at byte %d: %d samples, want the %d of the whole chunks before it", cut, rec.Samples(), want)
		}
	}
	if _, err := Create(FileOptions{Path: "stdout", Stream: out, Header: testHeader(), Rotate: 2}); err == nil {
		t.Errorf("a stream with Rotate: no error")
	}
}

// TestRingNeverEndsWithAnEmptyFile: a ring stopped right after its file
// filled up keeps that file as the newest, not a new one holding only a
// header, whatever sample the run ends on.
func TestRingNeverEndsWithAnEmptyFile(t *testing.T) {
	for n := 2; n <= 120; n++ {
		path := filepath.Join(t.TempDir(), "ring.ctxrec")
		o := FileOptions{Path: path, Header: testHeader(), Rotate: 3, Writer: WriterOptions{MaxSize: 4 << 10, FlushEvery: time.Nanosecond}}
		if _, err := writeAll(t, o, n); err != nil {
			t.Fatal(err)
		}
		rec, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Samples() == 0 {
			t.Errorf("%d samples written: the newest file holds none", n)
		}
		rec.Close()
	}
}
