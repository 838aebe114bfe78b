package record

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/zstdenc"
)

// ErrSizeLimit means the next chunk would take the file past MaxSize; it
// was not written.
var ErrSizeLimit = errors.New("recording reached its size limit")

// Defaults for WriterOptions.
const (
	// DefaultFlushEvery bounds what a crash can lose: at most this much
	// recorded time is held in memory before it is on disk.
	DefaultFlushEvery = 5 * time.Second
	// DefaultKeyframeEvery bounds what a damaged chunk costs: a reader
	// resumes at the next keyframe.
	DefaultKeyframeEvery = 10 * time.Minute
	// maxPendingRaw flushes a chunk early on a busy host.
	maxPendingRaw = 1 << 20
)

// WriterOptions tune a Writer; zero values take the defaults.
type WriterOptions struct {
	FlushEvery    time.Duration
	KeyframeEvery time.Duration
	// MaxSize, when positive, is the most bytes the file may hold.
	MaxSize int64
}

// Writer writes a recording. It is not safe for concurrent use.
type Writer struct {
	w    io.Writer
	opts WriterOptions
	enc  encoder
	// z compresses chunks on the calling goroutine: the recorder must
	// not add context switches of its own.
	z *zstdenc.Encoder

	raw    []byte
	frames int
	// written counts the frames in chunks on disk.
	written int
	// need is the size the file would have needed for the chunk that
	// met the cap.
	need int64
	out  []byte
	size int64
	// lastLen is the size of the last chunk that did not start with a
	// keyframe: the usual size, which NearFull projects from.
	lastLen  int
	chunkKey bool
	// ratio is the last chunk's compressed size over its raw size, which
	// the pending chunk's size on disk is projected from (roomFor); 1
	// before any chunk, since zstd hardly grows what it cannot shrink.
	ratio float64
	// full is set when a chunk was flushed early because the next frame
	// would likely not have fitted the room left (Full).
	full bool

	first              time.Time
	started            bool
	lastFlush, lastKey time.Duration
	err                error
}

// NewWriter writes the file's preamble and header to w.
func NewWriter(w io.Writer, h Header, o WriterOptions) (*Writer, error) {
	if o.FlushEvery <= 0 {
		o.FlushEvery = DefaultFlushEvery
	}
	if o.KeyframeEvery <= 0 {
		o.KeyframeEvery = DefaultKeyframeEvery
	}
	h.Version = FormatVersion
	body := h.marshal()
	b := append([]byte(magic), FormatVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(body)))
	b = append(b, body...)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(body, castagnoli))
	wr := &Writer{w: w, opts: o, z: new(zstdenc.Encoder), ratio: 1}
	if o.MaxSize > 0 && int64(len(b)) > o.MaxSize {
		return nil, &CapError{MaxSize: o.MaxSize, Need: int64(len(b))}
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	wr.size = int64(len(b))
	return wr, nil
}

// Size is the bytes written so far.
func (w *Writer) Size() int64 { return w.size }

// NearFull says the next chunk, if like the last, would not fit MaxSize:
// the moment to rotate before any sample is dropped.
func (w *Writer) NearFull() bool {
	return w.opts.MaxSize > 0 && w.size+2*int64(w.lastLen)+int64(chunkHeaderSize) > w.opts.MaxSize
}

// Full says the file has no room for another chunk like the last (NearFull)
// or that the last chunk was flushed early because the next frame would
// likely not have fitted: a file with a cap ends, or rotates, here.
func (w *Writer) Full() bool { return w.full || w.NearFull() }

// roomFor says whether the pending chunk, grown by another frame of add raw
// bytes (the size of the last frame; a keyframe is no measure of the
// frames after it, so it is not asked after one), would still fit under MaxSize, projected with the last chunk's
// compression ratio and a margin. Checked after every frame, it flushes a
// chunk before it outgrows the room left, instead of holding frames for a
// chunk that can no longer be written (FlushEvery is seconds of samples).
func (w *Writer) roomFor(add int) bool {
	if w.opts.MaxSize <= 0 {
		return true
	}
	est := float64(len(w.raw)+add) * w.ratio * 1.25
	return w.size+int64(chunkHeaderSize)+int64(est) <= w.opts.MaxSize
}

// Write adds one sample. Samples must come in time order from one
// sampler. The first error is sticky.
func (w *Writer) Write(s *model.Sample) error {
	if w.err != nil {
		return w.err
	}
	first := !w.started
	if first {
		w.first, w.started = s.Time, true
	}
	// Time on the monotonic clock since the first sample: the live
	// monitor computes rates from it, so the replay must too.
	mono := s.Time.Sub(w.first)
	key := first || mono-w.lastKey >= w.opts.KeyframeEvery
	if key && w.frames > 0 {
		// A keyframe starts a chunk, where a reader resynchronises.
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if key {
		w.lastKey, w.chunkKey = mono, true
	}
	var err error
	before := len(w.raw)
	w.raw, err = w.enc.appendFrame(w.raw, s, int64(mono), key)
	if err != nil {
		return err
	}
	w.frames++
	if mono-w.lastFlush >= w.opts.FlushEvery || len(w.raw) >= maxPendingRaw {
		w.lastFlush = mono
		return w.Flush()
	}
	if !key && !w.roomFor(len(w.raw)-before) {
		// Another frame like this one would likely take the chunk past
		// the cap, and a chunk that does not fit loses all its frames:
		// write these now, and let the file end (or rotate) here.
		w.lastFlush = mono
		if err := w.Flush(); err != nil {
			return err
		}
		w.full = true
	}
	return nil
}

// Flush writes the pending frames as one chunk.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.frames == 0 {
		return nil
	}
	comp := w.z.EncodeAll(w.raw, w.out[:0])
	w.out = comp
	b := make([]byte, 0, chunkHeaderSize)
	b = append(b, chunkSync[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(comp)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(w.raw)))
	b = binary.LittleEndian.AppendUint32(b, uint32(w.frames))
	crc := crc32.Update(crc32.Checksum(b[4:16], castagnoli), castagnoli, comp)
	b = binary.LittleEndian.AppendUint32(b, crc)
	n := int64(len(b) + len(comp))
	if w.opts.MaxSize > 0 && w.size+n > w.opts.MaxSize {
		w.need = w.size + n
		w.err = ErrSizeLimit
		return w.err
	}
	// One write call per chunk: a crash leaves a whole chunk or a short
	// tail the reader recognises.
	chunk := append(b, comp...)
	m, err := w.w.Write(chunk)
	w.size += int64(m)
	if err != nil {
		w.err = err
		return err
	}
	if !w.chunkKey {
		w.lastLen = len(chunk)
	}
	w.ratio = float64(len(comp)) / float64(len(w.raw))
	w.written += w.frames
	w.raw, w.frames, w.chunkKey = w.raw[:0], 0, false
	return nil
}

// Close flushes what is pending. It does not close the underlying writer.
func (w *Writer) Close() error {
	return w.Flush()
}

// FirstSize is the size a file of h and s takes, s in a chunk of its own
// as a FileRecorder writes its first sample: the least a cap must exceed
// for a replayable file, even when the header alone did not fit it.
func FirstSize(h Header, s *model.Sample, o WriterOptions) (int64, error) {
	o.MaxSize = 0
	w, err := NewWriter(io.Discard, h, o)
	if err != nil {
		return 0, err
	}
	if err := w.Write(s); err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return w.Size(), nil
}
