package record

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// FileOptions configure a FileRecorder.
type FileOptions struct {
	Path   string
	Header Header
	Writer WriterOptions
	// Rotate, when positive, keeps this many files when MaxSize is
	// reached: Path is the newest, Path.1 the one before, and so on; the
	// oldest is dropped. Zero stops at MaxSize instead.
	Rotate int
}

// FileRecorder writes a recording to a file, rotating it at a size cap.
type FileRecorder struct {
	o       FileOptions
	f       *os.File
	w       *Writer
	samples int
	// Dropped counts samples lost because a chunk did not fit the cap.
	Dropped int
	// Rotations counts files started after the first.
	Rotations int
	last      time.Time
}

// Create starts the recording at o.Path, replacing any file there.
func Create(o FileOptions) (*FileRecorder, error) {
	r := &FileRecorder{o: o}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *FileRecorder) open() error {
	f, err := os.OpenFile(r.o.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	h := r.o.Header
	h.Part = r.Rotations
	w, err := NewWriter(f, h, r.o.Writer)
	if err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", r.o.Path, err)
	}
	r.f, r.w = f, w
	return nil
}

// Write adds a sample. With no rotation, ErrSizeLimit means the file is
// full and closed, every sample in it readable.
func (r *FileRecorder) Write(s *model.Sample) error {
	pending := r.w.frames
	err := r.w.Write(s)
	if errors.Is(err, ErrSizeLimit) {
		// The chunk that did not fit was never written.
		r.Dropped += pending + 1
		if r.o.Rotate > 0 {
			return r.rotate()
		}
		r.f.Close()
		return err
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", r.o.Path, bare(err))
	}
	r.samples++
	r.last = s.Time
	if r.w.frames == 0 && r.w.NearFull() {
		if r.o.Rotate > 0 {
			return r.rotate()
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
	// Path.N-1 is the oldest kept; shift every file one up.
	os.Remove(fmt.Sprintf("%s.%d", r.o.Path, r.o.Rotate-1))
	for i := r.o.Rotate - 2; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", r.o.Path, i), fmt.Sprintf("%s.%d", r.o.Path, i+1))
	}
	if r.o.Rotate > 1 {
		if err := os.Rename(r.o.Path, r.o.Path+".1"); err != nil {
			return err
		}
	}
	r.Rotations++
	return r.open()
}

// Samples is the number of samples written to all files.
func (r *FileRecorder) Samples() int { return r.samples }

// Size is the current file's size.
func (r *FileRecorder) Size() int64 { return r.w.Size() }

// Last is the time of the last sample handed to Write; the file may end
// a few samples earlier, at its last complete chunk.
func (r *FileRecorder) Last() time.Time { return r.last }

// Close flushes and closes the file.
func (r *FileRecorder) Close() error {
	err := r.w.Close()
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

// Path is the file being written.
func (r *FileRecorder) Path() string { return r.o.Path }
