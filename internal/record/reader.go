package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// checkpointEvery is how many frames apart the reader keeps a copy of the
// decoded state, so a seek decodes at most this many frames.
const checkpointEvery = 64

// Recording is a parsed recording: its header, where each frame is, and
// what went wrong reading it. Frames are decoded again on demand.
type Recording struct {
	Header Header
	// Notes say where reading stopped and why, and what was skipped; one
	// line each, ready to print.
	Notes []string
	// Lost is the number of samples a damaged chunk cost, estimated from
	// the time gap around it.
	Lost int
	// Size is the file's length in bytes.
	Size int64

	// src holds the file's bytes, read a chunk at a time: what a
	// recording costs in memory is its index and one chunk, not its size.
	src io.ReaderAt
	// size is Size as an offset; bytes appended after opening are not
	// read.
	size int
	file *os.File
	// comp holds the compressed bytes of the chunk last read.
	comp   []byte
	chunks []chunkRef
	frames []frameRef
	checks []checkpoint
	loc    *time.Location
	zd     *zstd.Decoder

	cacheChunk int
	cache      []byte
}

type chunkRef struct{ off, compLen, rawLen int }

// frameRef locates one decodable frame.
type frameRef struct {
	chunk, off, len int
	// gap: the frame follows damage, so no rate is computed across it.
	gap        bool
	wall, mono int64
}

// checkpoint is the decoder state after frame idx.
type checkpoint struct {
	idx int
	st  state
}

// Open reads a recording file's header and index; frames are read from
// the file when played, so it stays open until Close.
func Open(path string) (*Recording, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	r, err := read(f, size, nil)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.file = f
	return r, nil
}

// openFile opens a recording file for Open. The file must be a regular
// file: a FIFO or device would block the read. It is opened non-blocking,
// since opening a FIFO blocks until a writer comes, and refused on what
// fstat says, so nothing blocks before the refusal.
func openFile(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if m := fi.Mode(); !m.IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is %s, %w", path, Kind(m), ErrNotFile)
	}
	return f, fi.Size(), nil
}

// Parse reads a recording from memory. Damage after a valid header is not
// an error: what can be read is kept and Notes say what was not. The error
// is for input that is not a recording at all, or one too new to read.
func Parse(data []byte) (*Recording, error) {
	return read(bytes.NewReader(data), int64(len(data)), nil)
}

// read parses the size bytes of src: the magic first, so a file that is
// not a recording costs a few bytes read, whatever its size. start, when
// not nil, is given the recording once its header is read, and returns
// what scan hands every frame it indexes (see scan).
func read(src io.ReaderAt, size int64, start func(*Recording) func(*decoder)) (*Recording, error) {
	if size == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrNotRecording)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("%w: %d bytes", ErrCorrupt, size)
	}
	total := int(size)
	// The magic, the version and the header's length.
	p := len(magic) + 1
	data := make([]byte, min(total, p+4))
	if _, err := src.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(data) < p || !bytes.Equal(data[:len(magic)], []byte(magic)) {
		if bytes.HasPrefix([]byte(magic), data) {
			return nil, fmt.Errorf("%w: the file ends inside its header (%d bytes)", ErrCorrupt, total)
		}
		return nil, ErrNotRecording
	}
	ver := int(data[len(magic)])
	if ver > FormatVersion {
		return nil, fmt.Errorf("%w: written with format %d, this ctxtop reads up to %d; replay it with a newer ctxtop", ErrNewerFormat, ver, FormatVersion)
	}
	if ver < 1 {
		return nil, fmt.Errorf("%w: format version %d", ErrCorrupt, ver)
	}
	if len(data) < p+4 {
		return nil, fmt.Errorf("%w: the file ends inside its header (%d bytes)", ErrCorrupt, total)
	}
	hl := int(binary.LittleEndian.Uint32(data[p:]))
	p += 4
	if hl > maxHeader {
		return nil, fmt.Errorf("%w: header claims %d bytes", ErrCorrupt, hl)
	}
	if total < p+hl+4 {
		return nil, fmt.Errorf("%w: the file ends inside its header (%d bytes)", ErrCorrupt, total)
	}
	hb := make([]byte, hl+4)
	if _, err := src.ReadAt(hb, int64(p)); err != nil {
		return nil, err
	}
	body := hb[:hl]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(hb[hl:]) {
		return nil, fmt.Errorf("%w: header checksum mismatch", ErrCorrupt)
	}
	r := &Recording{src: src, size: total, Size: size, cacheChunk: -1}
	if err := r.Header.unmarshal(body); err != nil {
		return nil, err
	}
	r.Header.Version = ver
	h := &r.Header
	h.Facts.Hostname, h.Facts.Kernel = sanitize.Name(h.Facts.Hostname), sanitize.Name(h.Facts.Kernel)
	h.CtxtopVersion, h.ProcRoot, h.ZoneName = sanitize.Name(h.CtxtopVersion), sanitize.Name(h.ProcRoot), sanitize.Name(h.ZoneName)
	h.Facts.CPUModel = sanitize.Name(h.Facts.CPUModel)
	r.loc = h.Location()
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxChunkRaw),
		zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	r.zd = zd
	var each func(*decoder)
	if start != nil {
		each = start(r)
	}
	r.scan(p+hl+4, each)
	return r, nil
}

// Close releases the decompressor and the file.
func (r *Recording) Close() {
	r.zd.Close()
	if r.file != nil {
		r.file.Close()
	}
}

// Location is the zone the recording's clock is shown in.
func (r *Recording) Location() *time.Location { return r.loc }

// readChunk parses the chunk header at off and reads the chunk into
// r.comp; ok is false when the bytes there are not a whole, intact chunk,
// and why says what is wrong.
func (r *Recording) readChunk(off int) (c chunkRef, ok bool, truncated bool, why string) {
	var hdr [chunkHeaderSize]byte
	if r.size-off < chunkHeaderSize {
		return c, false, true, "the last chunk's header is incomplete"
	}
	if _, err := r.src.ReadAt(hdr[:], int64(off)); err != nil {
		return c, false, true, "cannot read: " + err.Error()
	}
	if !bytes.Equal(hdr[:4], chunkSync[:]) {
		return c, false, false, "no chunk marker"
	}
	// The frame count at off+12 is not needed: the frames are counted
	// as they are decoded.
	compLen := int(binary.LittleEndian.Uint32(hdr[4:]))
	rawLen := int(binary.LittleEndian.Uint32(hdr[8:]))
	if compLen > maxChunkCompressed || rawLen > maxChunkRaw {
		return c, false, false, "chunk length out of range"
	}
	if r.size-off-chunkHeaderSize < compLen {
		return c, false, true, "the last chunk is incomplete"
	}
	comp, err := r.readComp(off, compLen)
	if err != nil {
		return c, false, true, "cannot read: " + err.Error()
	}
	crc := crc32.Update(crc32.Checksum(hdr[4:16], castagnoli), castagnoli, comp)
	if crc != binary.LittleEndian.Uint32(hdr[16:]) {
		return c, false, false, "checksum mismatch"
	}
	return chunkRef{off: off, compLen: compLen, rawLen: rawLen}, true, false, ""
}

// readComp reads the compressed bytes of the chunk at off into r.comp,
// which grows to the largest chunk read and no further.
func (r *Recording) readComp(off, compLen int) ([]byte, error) {
	if cap(r.comp) < compLen {
		r.comp = make([]byte, compLen)
	}
	comp := r.comp[:compLen]
	if _, err := r.src.ReadAt(comp, int64(off+chunkHeaderSize)); err != nil {
		return nil, err
	}
	return comp, nil
}

// syncWindow is how much of the file nextSync reads at a time.
const syncWindow = 64 << 10

// nextSync finds the next chunk marker after off, or -1, reading a window
// at a time.
func (r *Recording) nextSync(off int) int {
	buf := make([]byte, syncWindow)
	for off < r.size {
		n, err := r.src.ReadAt(buf[:min(len(buf), r.size-off)], int64(off))
		if i := bytes.Index(buf[:n], chunkSync[:]); i >= 0 {
			return off + i
		}
		if err != nil || n < len(chunkSync) {
			return -1
		}
		// A marker may straddle two windows.
		off += n - len(chunkSync) + 1
	}
	return -1
}

// decompress returns chunk ci's frames; comp, when not nil, is its
// compressed bytes, already read.
func (r *Recording) decompress(ci int, comp []byte) ([]byte, error) {
	if ci == r.cacheChunk {
		return r.cache, nil
	}
	c := r.chunks[ci]
	if comp == nil {
		var err error
		if comp, err = r.readComp(c.off, c.compLen); err != nil {
			return nil, err
		}
	}
	// A new buffer each time: a frame's bytes stay valid after the next
	// chunk is read.
	out, err := r.zd.DecodeAll(comp, make([]byte, 0, c.rawLen))
	if err != nil {
		return nil, err
	}
	if len(out) != c.rawLen {
		return nil, fmt.Errorf("chunk holds %d bytes, its header says %d", len(out), c.rawLen)
	}
	r.cacheChunk, r.cache = ci, out
	return out, nil
}

// scan walks the chunks from off, decodes every frame once to check it,
// and notes the damage it meets. each, when not nil, is given the decoder
// after every frame it indexes, that frame being the last of r.frames:
// the state a player that applied the indexed frames in order would have,
// since a frame after damage is a keyframe, which starts afresh. A reader
// that wants every sample (the marks, a report) is then served by the
// decode that indexes them instead of one more.
func (r *Recording) scan(off int, each func(*decoder)) {
	var d decoder
	var lastGood *frameRef
	damagedAt := -1 // byte offset of the first damage not yet reported
	damageWhy := ""
	skipping := false // waiting for a keyframe after damage
	report := func(resume *frameRef) {
		if damagedAt < 0 {
			return
		}
		msg := fmt.Sprintf("damaged data at byte %d (%s)", damagedAt, damageWhy)
		if resume == nil {
			r.Notes = append(r.Notes, msg+"; nothing readable after it")
		} else {
			lost := 0
			if lastGood != nil && r.Header.Interval > 0 {
				lost = max(int((time.Duration(resume.mono-lastGood.mono)+r.Header.Interval/2)/r.Header.Interval)-1, 0)
			}
			r.Lost += lost
			r.Notes = append(r.Notes, fmt.Sprintf("%s; resumed at %s, about %d samples lost", msg,
				time.Unix(0, resume.wall).In(r.loc).Format("15:04:05"), lost))
		}
		damagedAt = -1
	}
	damage := func(at int, why string) {
		if damagedAt < 0 {
			damagedAt, damageWhy = at, why
		}
		skipping = true
		d.synced = false
	}
	for off < r.size {
		c, ok, truncated, why := r.readChunk(off)
		if !ok {
			next := r.nextSync(off + 1)
			if next < 0 {
				if truncated || damagedAt >= 0 {
					report(nil)
					end := "the recording ends here"
					if lastGood != nil {
						end = "the recording ends at " + time.Unix(0, lastGood.wall).In(r.loc).Format("15:04:05")
					}
					r.Notes = append(r.Notes, fmt.Sprintf("stopped at byte %d of %d: %s, as a recorder killed mid-write or a full disk leaves it; %s",
						off, r.size, why, end))
				} else {
					damage(off, why)
					report(nil)
				}
				return
			}
			damage(off, why)
			off = next
			continue
		}
		ci := len(r.chunks)
		r.chunks = append(r.chunks, c)
		off = c.off + chunkHeaderSize + c.compLen
		raw, err := r.decompress(ci, r.comp[:c.compLen])
		if err != nil {
			damage(c.off, "cannot decompress: "+err.Error())
			continue
		}
		for p := 0; p < len(raw); {
			n, m := protowire.ConsumeVarint(raw[p:])
			if m < 0 || n > uint64(len(raw)-p-m) {
				damage(c.off, "bad frame length")
				break
			}
			fb := raw[p+m : p+m+int(n)]
			fr := frameRef{chunk: ci, off: p + m, len: int(n)}
			p += m + int(n)
			if skipping && !isKeyframe(fb) {
				continue
			}
			if err := d.apply(fb); err != nil {
				damage(c.off, err.Error())
				continue
			}
			fr.wall, fr.mono = d.st.wall, d.st.mono
			if skipping || len(r.frames) == 0 {
				fr.gap = len(r.frames) > 0
				report(&fr)
				skipping = false
			}
			if lastGood != nil && !fr.gap && fr.mono <= lastGood.mono {
				// Time must move forward, or no rate can be computed.
				damage(c.off, "time went backwards")
				continue
			}
			r.frames = append(r.frames, fr)
			lastGood = &r.frames[len(r.frames)-1]
			if (len(r.frames)-1)%checkpointEvery == 0 || fr.gap {
				r.checks = append(r.checks, checkpoint{idx: len(r.frames) - 1, st: d.st.clone()})
			}
			if each != nil {
				each(&d)
			}
		}
	}
	if skipping {
		report(nil)
	}
}

// Samples is the number of readable samples.
func (r *Recording) Samples() int { return len(r.frames) }

// Span is the wall-clock time of the first and last readable samples.
func (r *Recording) Span() (first, last time.Time) {
	if len(r.frames) == 0 {
		return
	}
	return time.Unix(0, r.frames[0].wall).In(r.loc), time.Unix(0, r.frames[len(r.frames)-1].wall).In(r.loc)
}

// frameBytes returns frame i's encoded bytes.
func (r *Recording) frameBytes(i int) ([]byte, error) {
	f := r.frames[i]
	raw, err := r.decompress(f.chunk, nil)
	if err != nil {
		return nil, err
	}
	return raw[f.off : f.off+f.len], nil
}
