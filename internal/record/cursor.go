package record

import (
	"fmt"
	"sort"
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Cursor reads a recording's raw samples in order, from its start or from
// a checkpoint: all a player needs of the file. It derives nothing.
type Cursor struct {
	r  *Recording
	d  decoder
	at int
}

// Cursor stands before the first sample.
func (r *Recording) Cursor() *Cursor { return &Cursor{r: r, at: -1} }

// Pos is the index of the sample last read, -1 before the first.
func (c *Cursor) Pos() int { return c.at }

// Rewind stands the cursor before the first sample.
func (c *Cursor) Rewind() { c.d, c.at = decoder{}, -1 }

// Next reads the sample after Pos into dst. dst's Tasks share the
// cursor's buffer, valid until the second Next after this one, so a caller
// may hold the last two samples (an interval) and no more.
func (c *Cursor) Next(dst *model.Sample) error {
	b, err := c.r.frameBytes(c.at + 1)
	if err != nil {
		return err
	}
	if err := c.d.apply(b); err != nil {
		return err
	}
	c.at++
	c.d.sample(dst, c.r.loc)
	return nil
}

// SeekBefore moves to the last checkpoint at or before sample last and
// reads that sample into dst, so that a seek decodes at most a
// checkpoint's span of frames; false when no checkpoint is that early.
func (c *Cursor) SeekBefore(last int, dst *model.Sample) bool {
	k := sort.Search(len(c.r.checks), func(j int) bool { return c.r.checks[j].idx > last }) - 1
	if k < 0 {
		return false
	}
	ck := &c.r.checks[k]
	c.d = decoder{st: ck.st.clone(), synced: true}
	c.at = ck.idx
	c.d.sample(dst, c.r.loc)
	return true
}

// Gap says whether sample i follows damage: no rate is taken across it.
func (r *Recording) Gap(i int) bool { return r.frames[i].gap }

// Mono is sample i's time on the recorder's monotonic clock, as an offset
// from the first sample's wall clock time: what rates are taken over, as
// live, where the wall clock may be stepped.
func (r *Recording) Mono(i int) time.Time {
	return time.Unix(0, r.frames[0].wall).Add(time.Duration(r.frames[i].mono))
}

// Window is the first and last sample from..to (a zero time leaves that
// end open); hi < lo when none is.
func (r *Recording) Window(from, to time.Time) (lo, hi int) {
	lo, hi = 0, len(r.frames)-1
	if !from.IsZero() {
		lo = sort.Search(len(r.frames), func(i int) bool { return !r.frameTime(i).Before(from) })
	}
	if !to.IsZero() {
		hi = sort.Search(len(r.frames), func(i int) bool { return r.frameTime(i).After(to) }) - 1
	}
	return lo, hi
}

// frameTime is sample i's wall-clock time.
func (r *Recording) frameTime(i int) time.Time { return time.Unix(0, r.frames[i].wall) }

// Frame is the sample the reading pass has just indexed (OpenEach).
type Frame struct {
	d   *decoder
	loc *time.Location
}

// Sample reads the frame into dst, as Cursor.Next does.
func (f Frame) Sample(dst *model.Sample) { f.d.sample(dst, f.loc) }

// OpenEach is Open that also hands every sample to the function start
// returns, in order, as the pass that indexes the file decodes it: a
// reader that wants every sample (marks, a report) is served by that one
// decode instead of one more. start is given the recording once its
// header is read. The caller closes the recording.
func OpenEach(path string, start func(*Recording) func(Frame)) (*Recording, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	r, err := read(f, size, func(r *Recording) func(*decoder) {
		each := start(r)
		return func(d *decoder) { each(Frame{d: d, loc: r.loc}) }
	})
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.file = f
	return r, nil
}
