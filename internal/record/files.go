package record

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// ErrExists means a file to record to is already there and FileOptions
// did not say to replace it.
var ErrExists = errors.New("already exists")

// ErrNotFile means what is at a path is neither a regular file nor a
// symbolic link: a device, FIFO, socket or directory. A recording never
// replaces one, Overwrite or not (a recording over /dev/null, as root,
// would replace the system's /dev/null), and never reads one (a FIFO
// would block the reader).
var ErrNotFile = errors.New("not a regular file")

// Kind names what a file mode is, for a message: "a FIFO", "a
// character device".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// replaceable refuses what a recording must not replace: anything but
// nothing, a regular file or a symbolic link (the link itself, never its
// target).
func replaceable(name string) error {
	fi, err := os.Lstat(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if m := fi.Mode(); !m.IsRegular() && m&os.ModeSymlink == 0 {
		return fmt.Errorf("%s is %s, %w", name, Kind(m), ErrNotFile)
	}
	return nil
}

// FileOptions configure a FileRecorder.
type FileOptions struct {
	Path   string
	Header Header
	Writer WriterOptions
	// Rotate, when positive, keeps this many files when MaxSize is
	// reached: Path is the newest, Path.1 the one before, and so on; the
	// oldest is dropped. Zero stops at MaxSize instead.
	Rotate int
	// Overwrite replaces a file already at Path (and, with Rotate, the
	// Path.1 ... it would keep); without it Create refuses them. Either
	// way a symbolic link there is replaced, never written through: a
	// link planted in a shared directory must not aim root's writes.
	Overwrite bool
	// Stream, when set, is where the recording goes instead of a file
	// at Path (record -o -, stdout, maybe a pipe): written in the same
	// whole chunks, so a stream cut anywhere replays up to its last
	// whole chunk, but never claimed, renamed, rotated or removed. Path
	// only names it in messages.
	Stream *os.File
}

// CapError means MaxSize cannot hold the two samples a replay needs: the
// file was closed holding Kept samples (0 or 1).
type CapError struct {
	MaxSize int64
	// Need is the size the file needed for Kept+1 samples, from the
	// chunks actually encoded: with Kept 1 the smallest size that works,
	// with Kept 0 a bound any working size exceeds.
	Need int64
	Kept int
}

func (e *CapError) Error() string {
	if e.Kept == 0 {
		return fmt.Sprintf("a size cap of %d B is too small: a replayable recording needs more than %d B on this host (its header and first sample; a replay needs two samples)", e.MaxSize, e.Need)
	}
	return fmt.Sprintf("a size cap of %d B holds one sample only: a replay needs two, and the header and first two samples take %d B on this host", e.MaxSize, e.Need)
}

// Unwrap makes a CapError an ErrSizeLimit too.
func (e *CapError) Unwrap() error { return ErrSizeLimit }

// FileRecorder writes a recording to a file, rotating it at a size cap.
type FileRecorder struct {
	o FileOptions
	f *os.File
	w *Writer
	// closedSamples is what the files before the current one hold;
	// parts what each of them holds, the newest last.
	closedSamples int
	parts         []int
	// Dropped counts samples lost because a chunk did not fit the cap.
	Dropped int
	// Rotations counts files started after the first.
	Rotations   int
	first, last time.Time
	// full says the current file is full: the next Write rotates.
	full bool
}

// Create starts the recording at o.Path. It refuses a file already there
// (and Path.1 ... with Rotate) unless o.Overwrite says to replace it.
func Create(o FileOptions) (*FileRecorder, error) {
	if o.Stream != nil {
		if o.Rotate > 0 {
			return nil, errors.New("a stream cannot rotate: there are no files to keep")
		}
		r := &FileRecorder{o: o, f: o.Stream}
		w, err := NewWriter(o.Stream, o.Header, o.Writer)
		if err != nil {
			return nil, fmt.Errorf("writing %s: %w", o.Path, bare(err))
		}
		r.w = w
		return r, nil
	}
	if err := claim(o); err != nil {
		return nil, err
	}
	r := &FileRecorder{o: o}
	if err := r.open(o.Overwrite); err != nil {
		return nil, err
	}
	return r, nil
}

// claim checks the names the recording will take. With Overwrite, the
// older parts of a ring go now: left there, they would pass for parts of
// this recording.
func claim(o FileOptions) error {
	names := []string{o.Path}
	for i := 1; i < o.Rotate; i++ {
		names = append(names, partName(o.Path, i))
	}
	// Every name first: a ring whose third part is a device must not
	// lose its first two parts before the refusal.
	for _, name := range names {
		if err := replaceable(name); err != nil {
			return err
		}
	}
	for i, name := range names {
		fi, err := os.Lstat(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !o.Overwrite {
			what := ""
			if fi.Mode()&os.ModeSymlink != 0 {
				what = " (a symbolic link)"
			}
			return fmt.Errorf("%s%s %w", name, what, ErrExists)
		}
		if i > 0 {
			// Remove unlinks a symbolic link itself, not its target.
			if err := os.Remove(name); err != nil {
				return err
			}
		}
	}
	return nil
}

func partName(path string, i int) string { return path + "." + strconv.Itoa(i) }

// open starts a file at o.Path. Without replace it creates the file
// exclusively; with replace it writes a new file beside it and renames it
// over whatever is there, which replaces a link rather than following it.
func (r *FileRecorder) open(replace bool) error {
	name := r.o.Path
	var f *os.File
	var err error
	if replace {
		f, err = createTemp(name)
	} else {
		f, err = createNew(name)
	}
	if err != nil {
		return err
	}
	h := r.o.Header
	h.Part = r.Rotations
	w, err := NewWriter(f, h, r.o.Writer)
	if err == nil && replace {
		// Checked again at the last moment: claim looked before the
		// first sample, which may be a while.
		err = replaceable(name)
		if err == nil {
			err = os.Rename(f.Name(), name)
		}
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", name, bare(err))
	}
	r.f, r.w = f, w
	return nil
}

// createNew creates name, failing if anything, a link included, is there.
func createNew(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s %w", name, ErrExists)
	}
	return f, err
}

// createTemp creates a new file in name's directory, to be renamed to name.
func createTemp(name string) (*os.File, error) {
	dir, base := filepath.Split(name)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp"+strconv.FormatUint(rand.Uint64()&0xffffffff, 36))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if !errors.Is(err, os.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("%s: no free name for a temporary file beside it", name)
}

// Write adds a sample. With no rotation, ErrSizeLimit means the file is
// full and closed, every sample in it readable. A *CapError means the cap
// cannot hold a replayable file at all; the recorder is closed and its
// file removed.
func (r *FileRecorder) Write(s *model.Sample) error {
	if r.full {
		// The next file starts with the sample that needs it: a ring
		// ended right after a rotation keeps no empty newest file.
		r.full = false
		if err := r.rotate(); err != nil {
			return err
		}
	}
	pending := r.w.frames
	err := r.w.Write(s)
	if err == nil && r.w.written+r.w.frames <= 2 {
		// A file's first two samples go to disk at once: a replay needs
		// two, and a cap too small for them shows now, measured on the
		// samples themselves, not after a full chunk of them.
		err = r.w.Flush()
	}
	if errors.Is(err, ErrSizeLimit) {
		// The chunk that did not fit was never written.
		r.Dropped += pending + 1
		if r.w.written < 2 {
			// Rotating would only start another file too small, and
			// this one, which no replay can use, would block the next
			// try at the name.
			r.f.Close()
			if r.o.Stream == nil {
				os.Remove(r.o.Path)
			}
			return &CapError{MaxSize: r.o.Writer.MaxSize, Need: r.w.need, Kept: r.w.written}
		}
		if r.o.Rotate > 0 {
			return r.rotate()
		}
		r.f.Close()
		return err
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", r.o.Path, bare(err))
	}
	if r.first.IsZero() {
		r.first = s.Time
	}
	r.last = s.Time
	if r.w.frames == 0 && r.w.written >= 2 && r.w.Full() {
		if r.o.Rotate > 0 {
			r.full = true
			return nil
		}
		r.f.Close()
		return ErrSizeLimit
	}
	return nil
}

func (r *FileRecorder) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.closedSamples += r.w.written
	r.parts = append(r.parts, r.w.written)
	// Path.N-1 is the oldest kept; shift every file one up. Rename and
	// Remove act on a link itself, never on what it points to; a device
	// or FIFO put in the ring's way since it started stops it instead.
	for i := 1; i < r.o.Rotate; i++ {
		if err := replaceable(partName(r.o.Path, i)); err != nil {
			return err
		}
	}
	os.Remove(partName(r.o.Path, r.o.Rotate-1))
	for i := r.o.Rotate - 2; i >= 1; i-- {
		os.Rename(partName(r.o.Path, i), partName(r.o.Path, i+1))
	}
	if r.o.Rotate > 1 {
		if err := os.Rename(r.o.Path, partName(r.o.Path, 1)); err != nil {
			return err
		}
	}
	r.Rotations++
	return r.open(true)
}

// Samples is the number of samples on disk in all files written: those
// still waiting for their chunk, or dropped at a cap, do not count.
func (r *FileRecorder) Samples() int { return r.closedSamples + r.w.written }

// Kept is the number of samples on disk in the files the ring keeps
// (Path and the Rotate-1 parts before it), and in Path alone: after a
// rotation, what the files left behind hold, not all that was written.
func (r *FileRecorder) Kept() (kept, newest int) {
	kept, newest = r.w.written, r.w.written
	for i := len(r.parts) - 1; i >= 0 && i >= len(r.parts)-(r.o.Rotate-1); i-- {
		kept += r.parts[i]
	}
	return kept, newest
}

// Size is the current file's size.
func (r *FileRecorder) Size() int64 { return r.w.Size() }

// Last is the time of the last sample handed to Write; the file may end
// a few samples earlier, at its last complete chunk.
func (r *FileRecorder) Last() time.Time { return r.last }

// First is the time of the first sample handed to Write.
func (r *FileRecorder) First() time.Time { return r.first }

// Close flushes and closes the file.
func (r *FileRecorder) Close() error {
	// A cap met earlier counted its samples already.
	pending, fresh := r.w.frames, r.w.err == nil
	err := r.w.Close()
	if errors.Is(err, ErrSizeLimit) && fresh {
		r.Dropped += pending
	}
	if cerr := r.f.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
		err = cerr
	}
	if err != nil && !errors.Is(err, ErrSizeLimit) {
		return fmt.Errorf("writing %s: %w", r.o.Path, bare(err))
	}
	return nil
}

// bare drops the path an *os.PathError repeats.
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Streamed says the recording goes to FileOptions.Stream, not a file.
func (r *FileRecorder) Streamed() bool { return r.o.Stream != nil }

// Path is the file being written.
func (r *FileRecorder) Path() string { return r.o.Path }
