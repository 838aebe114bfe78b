package record

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ctxtop/ctxtop/internal/record/recordtest"
)

// writeAll writes samples to a FileRecorder until the first error.
func writeAll(t *testing.T, o FileOptions, n int) (*FileRecorder, error) {
	t.Helper()
	r, err := Create(o)
	if err != nil {
		return nil, err
	}
	for _, s := range recordtest.Run(40, 5, n, false) {
		if err := r.Write(&s); err != nil {
			return r, err
		}
	}
	return r, r.Close()
}

func TestCreateRefusesAnExistingFileOrLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.ctxrec")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling.ctxrec")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), dangling); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{target, link, dangling} {
		_, err := Create(FileOptions{Path: path, Header: testHeader()})
		if !errors.Is(err, ErrExists) {
			t.Errorf("%s: Create error %v, want ErrExists", filepath.Base(path), err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dangling link's target was created: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("the existing file now holds %q", b)
	}
}

func TestOverwriteReplacesALinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "r.ctxrec")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if _, err := writeAll(t, FileOptions{Path: path, Header: testHeader(), Overwrite: true}, 5); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("the link's target now holds %.20q", b)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("%s is not a regular file now: %v %v", path, fi.Mode(), err)
	}
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if diff := cmp.Diff(5, rec.Samples()); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

func TestRotationClaimsEveryPart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ring.ctxrec")
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path+".2"); err != nil {
		t.Fatal(err)
	}
	o := FileOptions{Path: path, Header: testHeader(), Rotate: 3, Writer: WriterOptions{MaxSize: 4 << 10, FlushEvery: time.Nanosecond}}
	if _, err := Create(o); !errors.Is(err, ErrExists) {
		t.Errorf("a part of the ring is there: Create error %v, want ErrExists", err)
	}
	o.Overwrite = true
	r, err := writeAll(t, o, 200)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rotations < 3 {
		t.Fatalf("%d rotations; the test needs a full ring", r.Rotations)
	}
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Errorf("the link's target now holds %.20q", b)
	}
	for _, p := range []string{path, path + ".1", path + ".2"} {
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v %v, want a regular file", filepath.Base(p), fi, err)
		}
	}
}

// TestCapTooSmallForTwoSamplesIsRefused: a cap that cannot hold the two
// samples a replay needs ends in a CapError naming the size the samples
// took, leaves no file, and never rotates into files holding nothing.
func TestCapTooSmallForTwoSamplesIsRefused(t *testing.T) {
	dir := t.TempDir()
	// The sizes of the header and the first two samples, each in a chunk
	// of its own as a FileRecorder writes them.
	free, err := writeAll(t, FileOptions{Path: filepath.Join(dir, "free.ctxrec"), Header: testHeader()}, 2)
	if err != nil {
		t.Fatal(err)
	}
	two := free.Size()
	data, err := os.ReadFile(filepath.Join(dir, "free.ctxrec"))
	if err != nil {
		t.Fatal(err)
	}
	offs := chunkOffsets(t, data)
	one := int64(offs[1])
	for _, tc := range []struct {
		max    int64
		rotate int
		want   CapError
	}{
		{max: 200, want: CapError{MaxSize: 200, Need: one, Kept: 0}},
		{max: 200, rotate: 3, want: CapError{MaxSize: 200, Need: one, Kept: 0}},
		{max: 50, want: CapError{MaxSize: 50, Need: int64(offs[0]), Kept: 0}},
		{max: two - 1, want: CapError{MaxSize: two - 1, Need: two, Kept: 1}},
		{max: two - 1, rotate: 2, want: CapError{MaxSize: two - 1, Need: two, Kept: 1}},
	} {
		path := filepath.Join(dir, "capped.ctxrec")
		_, err := writeAll(t, FileOptions{Path: path, Header: testHeader(), Rotate: tc.rotate, Writer: WriterOptions{MaxSize: tc.max}}, 20)
		var ce *CapError
		if !errors.As(err, &ce) {
			t.Errorf("cap %d, rotate %d: error %v, want a CapError", tc.max, tc.rotate, err)
			continue
		}
		if diff := cmp.Diff(tc.want, *ce); diff != "" {
			t.Errorf("cap %d, rotate %d (-want +got):\n%s", tc.max, tc.rotate, diff)
		}
		if left, _ := filepath.Glob(path + "*"); len(left) > 0 {
			t.Errorf("cap %d, rotate %d: files left: %q", tc.max, tc.rotate, left)
		}
	}
	// The size a one-sample CapError names is enough.
	path := filepath.Join(dir, "fits.ctxrec")
	r, err := writeAll(t, FileOptions{Path: path, Header: testHeader(), Writer: WriterOptions{MaxSize: two}}, 20)
	if err != nil && !errors.Is(err, ErrSizeLimit) {
		t.Fatal(err)
	}
	if errors.As(err, new(*CapError)) {
		t.Errorf("cap %d, the size named: %v", two, err)
	}
	if r.Samples() < 2 {
		t.Errorf("cap %d keeps %d samples", two, r.Samples())
	}
}

// TestSamplesCountsOnlyWhatIsOnDisk: samples still pending when the cap
// is met at Close are dropped, not reported as recorded.
func TestSamplesCountsOnlyWhatIsOnDisk(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.ctxrec")
	size := func(n int) int64 {
		r, err := writeAll(t, FileOptions{Path: filepath.Join(dir, "free.ctxrec"), Header: testHeader(), Overwrite: true, Writer: WriterOptions{FlushEvery: time.Hour}}, n)
		if err != nil {
			t.Fatal(err)
		}
		return r.Size()
	}
	one, two, ten := size(1), size(2), size(10)
	// Room for the first two samples and a few more, not for all 10.
	capped := two + 3*(two-one) + chunkHeaderSize + 1
	if capped >= ten {
		t.Fatalf("setup: a cap of %d holds all 10 samples (%d B)", capped, ten)
	}
	r, err := writeAll(t, FileOptions{Path: path, Header: testHeader(), Writer: WriterOptions{MaxSize: capped, FlushEvery: time.Hour}}, 10)
	// The chunk is written before it outgrows the room left, and the
	// file ends there: every sample handed over is on disk.
	if !errors.Is(err, ErrSizeLimit) {
		t.Fatalf("writing 10 samples under a cap of %d: %v, want ErrSizeLimit", capped, err)
	}
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	if r.Dropped != 0 || r.Samples() < 3 || r.Samples() >= 10 {
		t.Errorf("%d samples on disk, %d dropped: want 3 to 9 on disk, none dropped", r.Samples(), r.Dropped)
	}
	if diff := cmp.Diff(rec.Samples(), r.Samples()); diff != "" {
		t.Errorf("samples said (-in the file +said):\n%s", diff)
	}
}

// TestRotationKeepsEverySample: a chunk held for seconds of samples
// (FlushEvery) is written before it outgrows the room left in the file, so
// a ring drops nothing at a cap and fills each file to most of the cap, not
// to the two samples written at once.
func TestRotationKeepsEverySample(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ring.ctxrec")
	const capBytes = 8 << 10
	o := FileOptions{Path: path, Header: testHeader(), Rotate: 3, Writer: WriterOptions{MaxSize: capBytes, FlushEvery: time.Hour}}
	r, err := writeAll(t, o, 300)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rotations < 3 {
		t.Fatalf("%d rotations; the test needs a full ring", r.Rotations)
	}
	if r.Dropped != 0 {
		t.Errorf("%d of 300 samples dropped at the cap, want 0", r.Dropped)
	}
	if r.Samples() != 300 {
		t.Errorf("%d samples on disk over all files, want 300", r.Samples())
	}
	kept := 0
	for _, p := range []string{path + ".2", path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > capBytes || fi.Size() < capBytes/2 {
			t.Errorf("%s: %d bytes, want between half the cap and the cap (%d)", filepath.Base(p), fi.Size(), capBytes)
		}
		rec, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		kept += rec.Samples()
		rec.Close()
	}
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	kept += rec.Samples()
	rec.Close()
	if k, _ := r.Kept(); k != kept {
		t.Errorf("the recorder says the ring keeps %d samples, the files hold %d", k, kept)
	}
}
