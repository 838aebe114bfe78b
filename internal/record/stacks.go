package record

import (
	"fmt"
	"math"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Stacks message field numbers (frame field 18, format 4).
const (
	gTime        = 1
	gUnavailable = 2
	gKernelHid   = 3
	gTargets     = 4
	gDropped     = 5
	gIntrWakings = 6
	gReset       = 7
	gString      = 8
	gStack       = 9
	gBlocked     = 10
	gWoken       = 11
	// The share of the interval the tracer was attached; absent when it
	// is unknown (0).
	gAttached = 12
	// A stack table entry.
	eFrames       = 1
	eKernelFrames = 2
	eOwn          = 3
	eNoFP         = 4
	eTruncated    = 5
)

// Bounds on the stacks a reader keeps. The tables (strings, stacks) are
// the writer's since the last keyframe or table reset; the writer resets
// them before they would pass these, so only a damaged file does.
const (
	maxStackStrings    = 1 << 16
	maxStackTableBytes = 16 << 20
	maxStackEntries    = 1 << 16
	// maxStackFrames: the tracer keeps 64 kernel and 64 user frames.
	maxStackFrames = 256
	// maxStackCounts: the tracer's maps hold 4,096 counts of each kind.
	maxStackCounts = 1 << 14
	maxStackTarget = 1 << 10
	// blockedCols and wokenCols are the values per count row: TID, PID,
	// stack, count; and the waker's name before the stack. A writer adds
	// one more, the samples' weight (the events they stand for), which
	// readers from before it skip.
	blockedCols = 4
	wokenCols   = 5
)

// stackTables are the strings and stacks a writer has defined since the
// last keyframe or reset, by index. Both sides keep them; a checkpoint
// clones them with the rest of the state.
type stackTables struct {
	strs   []string
	bytes  int
	stacks []model.Stack
}

func (t *stackTables) clone() stackTables {
	return stackTables{strs: t.strs[:len(t.strs):len(t.strs)], bytes: t.bytes, stacks: t.stacks[:len(t.stacks):len(t.stacks)]}
}

// stackEncoder is the writer's side of the tables: what is defined, by
// value.
type stackEncoder struct {
	strIDs   map[string]uint64
	stackIDs map[string]uint64
	bytes    int
	msg, tab []byte
	key      strings.Builder
}

func (e *stackEncoder) reset() {
	clear(e.strIDs)
	clear(e.stackIDs)
	e.bytes = 0
}

// appendStacks writes s.Stacks (frame field 18), or nothing when the
// tracer was off: the read's own values, each frame name and stack defined
// once in the message that first uses it since the last keyframe, and the
// counts as rows naming them by index.
func (e *encoder) appendStacks(b []byte, s *model.Sample, key bool) ([]byte, error) {
	g := &e.stk
	if g.strIDs == nil {
		g.strIDs, g.stackIDs = map[string]uint64{}, map[string]uint64{}
	}
	if key {
		g.reset()
	}
	r := s.Stacks
	if r == nil {
		return b, nil
	}
	if len(r.Blocked) > maxStackCounts || len(r.Woken) > maxStackCounts || len(r.Targets) > maxStackTarget {
		return b, fmt.Errorf("record: %d blocked and %d wake-up stack counts of %d targets, past %d and %d", len(r.Blocked), len(r.Woken), len(r.Targets), maxStackCounts, maxStackTarget)
	}
	m := g.msg[:0]
	if !r.Time.IsZero() {
		m = appendZAlways(m, gTime, int64(r.Time.Sub(s.Time)))
	}
	if r.Unavailable != "" {
		m = appendStr(m, gUnavailable, r.Unavailable)
	}
	if r.KernelHidden {
		m = protowire.AppendTag(m, gKernelHid, protowire.VarintType)
		m = protowire.AppendVarint(m, 1)
	}
	if len(r.Targets) > 0 {
		t := g.tab[:0]
		last := 0
		for _, tid := range r.Targets {
			t = protowire.AppendVarint(t, protowire.EncodeZigZag(int64(tid-last)))
			last = tid
		}
		m = appendMsg(m, gTargets, t)
		g.tab = t
	}
	m = appendZ(m, gDropped, int64(r.Dropped))
	m = appendZ(m, gIntrWakings, int64(r.InterruptWakings))
	m = appendF64(m, gAttached, 0, r.Attached)
	// A read that would fill the tables starts them again: the reader
	// bounds them.
	if g.fills(r) {
		g.reset()
		if g.fills(r) {
			return b, fmt.Errorf("record: a stack read of more than %d names, %d bytes of them or %d stacks", maxStackStrings, maxStackTableBytes, maxStackEntries)
		}
		m = protowire.AppendTag(m, gReset, protowire.VarintType)
		m = protowire.AppendVarint(m, 1)
	}
	var err error
	rows := func(field protowire.Number, cs []model.StackCount, woken bool) {
		if len(cs) == 0 || err != nil {
			return
		}
		k := uint64(blockedCols + 1)
		if woken {
			k = wokenCols + 1
		}
		var t []byte
		t = protowire.AppendVarint(t, k)
		t = protowire.AppendVarint(t, uint64(len(cs)))
		last := 0
		for i := range cs {
			c := &cs[i]
			if c.TID <= 0 || c.PID <= 0 || len(c.Frames) > maxStackFrames || c.KernelFrames < 0 || c.KernelFrames > len(c.Frames) || (!woken && c.Waker != "") {
				err = fmt.Errorf("record: stack count of thread %d/%d with %d frames (%d kernel)", c.PID, c.TID, len(c.Frames), c.KernelFrames)
				return
			}
			t = protowire.AppendVarint(t, protowire.EncodeZigZag(int64(c.TID-last)))
			t = protowire.AppendVarint(t, protowire.EncodeZigZag(int64(c.PID-c.TID)))
			last = c.TID
			var id uint64
			if woken {
				m, id = g.str(m, c.Waker)
				t = protowire.AppendVarint(t, id)
			}
			m, id = g.stack(m, &c.Stack)
			t = protowire.AppendVarint(t, id)
			t = protowire.AppendVarint(t, c.Count)
			t = protowire.AppendVarint(t, c.Weight)
		}
		m = appendMsg(m, field, t)
	}
	rows(gBlocked, r.Blocked, false)
	rows(gWoken, r.Woken, true)
	if err != nil {
		return b, err
	}
	g.msg = m
	return appendMsg(b, fStacks, m), nil
}

// fills reports whether defining r's strings and stacks could pass the
// reader's bounds (counting every one as new, which is cheap and safe).
func (g *stackEncoder) fills(r *model.StackSample) bool {
	strs, bytes, stacks := len(g.strIDs), g.bytes, len(g.stackIDs)
	for _, cs := range [][]model.StackCount{r.Blocked, r.Woken} {
		for i := range cs {
			c := &cs[i]
			stacks++
			strs += len(c.Frames) + 4
			for _, f := range c.Frames {
				bytes += min(len(f), maxString)
			}
			bytes += min(len(c.Own), maxString) + min(len(c.NoFramePointers), maxString) + min(len(c.Waker), maxString) + min(len(c.Truncated), maxString)
		}
	}
	return strs > maxStackStrings || bytes > maxStackTableBytes || stacks > maxStackEntries
}

// str is s's index plus one (0 for ""), defining it in m when new.
func (g *stackEncoder) str(m []byte, s string) ([]byte, uint64) {
	if s == "" {
		return m, 0
	}
	if id, ok := g.strIDs[s]; ok {
		return m, id + 1
	}
	id := uint64(len(g.strIDs))
	g.strIDs[s] = id
	g.bytes += min(len(s), maxString)
	return appendStr(m, gString, s), id + 1
}

// stack is st's index, defining it (and its strings) in m when new.
func (g *stackEncoder) stack(m []byte, st *model.Stack) ([]byte, uint64) {
	g.key.Reset()
	for _, f := range st.Frames {
		g.key.WriteString(f)
		g.key.WriteByte(0)
	}
	fmt.Fprintf(&g.key, "%d\x00%s\x00%s\x00%s", st.KernelFrames, st.Own, st.NoFramePointers, st.Truncated)
	k := g.key.String()
	if id, ok := g.stackIDs[k]; ok {
		return m, id
	}
	var e []byte
	var frames []byte
	for _, f := range st.Frames {
		var id uint64
		m, id = g.str(m, f)
		frames = protowire.AppendVarint(frames, id)
	}
	e = appendMsg(e, eFrames, frames)
	e = appendZ(e, eKernelFrames, int64(st.KernelFrames))
	var own, nofp uint64
	m, own = g.str(m, st.Own)
	m, nofp = g.str(m, st.NoFramePointers)
	e = appendZ(e, eOwn, int64(own))
	e = appendZ(e, eNoFP, int64(nofp))
	if st.Truncated != "" {
		var tr uint64
		m, tr = g.str(m, st.Truncated)
		e = appendZ(e, eTruncated, int64(tr))
	}
	id := uint64(len(g.stackIDs))
	g.stackIDs[k] = id
	return appendMsg(m, gStack, e), id
}

// applyStacks decodes a stacks message onto d.st: its table entries, then
// the read, whose times are offsets from the frame's wall clock (already
// applied).
func (d *decoder) applyStacks(b []byte) error {
	st := &d.st
	tab := &st.stackTab
	r := &model.StackSample{}
	var blocked, woken []byte
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return err
		}
		b = b[n:]
		switch {
		case f.num == gTime && f.typ == protowire.VarintType:
			r.Time = time.Unix(0, st.wall).Add(time.Duration(f.z()))
		case f.num == gUnavailable && f.typ == protowire.BytesType:
			r.Unavailable = readString(f.b)
		case f.num == gKernelHid && f.typ == protowire.VarintType:
			r.KernelHidden = f.v == 1
		case f.num == gTargets && f.typ == protowire.BytesType:
			last := 0
			for t := f.b; len(t) > 0; {
				v, n := protowire.ConsumeVarint(t)
				if n < 0 || len(r.Targets) >= maxStackTarget {
					return corrupt("stack targets")
				}
				t = t[n:]
				last = clampInt(int64(last) + protowire.DecodeZigZag(v))
				if last <= 0 {
					return corrupt("stack target %d", last)
				}
				r.Targets = append(r.Targets, last)
			}
		case f.num == gDropped && f.typ == protowire.VarintType:
			r.Dropped = uint64(f.z())
		case f.num == gIntrWakings && f.typ == protowire.VarintType:
			r.InterruptWakings = uint64(f.z())
		case f.num == gAttached && f.typ == protowire.Fixed64Type:
			r.Attached = math.Float64frombits(f.v)
		case f.num == gReset && f.typ == protowire.VarintType:
			*tab = stackTables{}
		case f.num == gString && f.typ == protowire.BytesType:
			// Counted as the writer counts them: cut, before sanitizing.
			size := min(len(f.b), maxString)
			if len(tab.strs) >= maxStackStrings || tab.bytes+size > maxStackTableBytes {
				return corrupt("more than %d stack strings or %d bytes of them", maxStackStrings, maxStackTableBytes)
			}
			tab.strs = append(tab.strs, readString(f.b))
			tab.bytes += size
		case f.num == gStack && f.typ == protowire.BytesType:
			if len(tab.stacks) >= maxStackEntries {
				return corrupt("more than %d stacks", maxStackEntries)
			}
			s, err := tab.parseStack(f.b)
			if err != nil {
				return err
			}
			tab.stacks = append(tab.stacks, s)
		case f.num == gBlocked && f.typ == protowire.BytesType:
			blocked = f.b
		case f.num == gWoken && f.typ == protowire.BytesType:
			woken = f.b
		}
	}
	var err error
	if r.Blocked, err = tab.parseCounts(blocked, false); err != nil {
		return err
	}
	if r.Woken, err = tab.parseCounts(woken, true); err != nil {
		return err
	}
	st.stacks = r
	return nil
}

// lookup is string reference v: its index plus one, 0 for "".
func (t *stackTables) lookup(v uint64) (string, error) {
	if v == 0 {
		return "", nil
	}
	if v > uint64(len(t.strs)) {
		return "", corrupt("stack string %d of %d", v-1, len(t.strs))
	}
	return t.strs[v-1], nil
}

func (t *stackTables) parseStack(b []byte) (model.Stack, error) {
	var s model.Stack
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return s, err
		}
		b = b[n:]
		switch {
		case f.num == eFrames && f.typ == protowire.BytesType:
			for fb := f.b; len(fb) > 0; {
				v, n := protowire.ConsumeVarint(fb)
				if n < 0 || len(s.Frames) >= maxStackFrames {
					return s, corrupt("stack frames")
				}
				fb = fb[n:]
				name, err := t.lookup(v)
				if err != nil {
					return s, err
				}
				s.Frames = append(s.Frames, name)
			}
		case f.num == eKernelFrames && f.typ == protowire.VarintType:
			s.KernelFrames = clampInt(f.z())
		case f.num == eOwn && f.typ == protowire.VarintType:
			if s.Own, err = t.lookup(uint64(f.z())); err != nil {
				return s, err
			}
		case f.num == eNoFP && f.typ == protowire.VarintType:
			if s.NoFramePointers, err = t.lookup(uint64(f.z())); err != nil {
				return s, err
			}
		case f.num == eTruncated && f.typ == protowire.VarintType:
			if s.Truncated, err = t.lookup(uint64(f.z())); err != nil {
				return s, err
			}
		}
	}
	if s.KernelFrames < 0 || s.KernelFrames > len(s.Frames) {
		return s, corrupt("a stack of %d frames with %d kernel frames", len(s.Frames), s.KernelFrames)
	}
	return s, nil
}

// parseCounts reads count rows: k values each (at least blockedCols, or
// wokenCols), columns past those it knows skipped; the row count is
// checked against the bytes before anything is allocated.
func (t *stackTables) parseCounts(b []byte, woken bool) ([]model.StackCount, error) {
	if len(b) == 0 {
		return nil, nil
	}
	want := uint64(blockedCols)
	if woken {
		want = wokenCols
	}
	k, n := protowire.ConsumeVarint(b)
	if n < 0 || k < want || k > maxPerTask {
		return nil, corrupt("stack counts: %d values per row", k)
	}
	b = b[n:]
	m, n := protowire.ConsumeVarint(b)
	if n < 0 || m > maxStackCounts || m*k > uint64(len(b)-n) {
		return nil, corrupt("stack counts: %d rows", m)
	}
	b = b[n:]
	out := make([]model.StackCount, 0, m)
	var row [wokenCols + 1]uint64
	last := 0
	for range m {
		for j := range k {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, corrupt("stack counts cut short")
			}
			b = b[n:]
			if j <= want {
				row[j] = v
			}
		}
		var c model.StackCount
		last = clampInt(int64(last) + protowire.DecodeZigZag(row[0]))
		c.TID, c.PID = last, clampInt(int64(last)+protowire.DecodeZigZag(row[1]))
		if c.TID <= 0 || c.PID <= 0 {
			return nil, corrupt("stack count of thread %d/%d", c.PID, c.TID)
		}
		s := row[2:]
		if woken {
			var err error
			if c.Waker, err = t.lookup(row[2]); err != nil {
				return nil, err
			}
			s = row[3:]
		}
		if s[0] >= uint64(len(t.stacks)) {
			return nil, corrupt("stack %d of %d", s[0], len(t.stacks))
		}
		c.Stack, c.Count = t.stacks[s[0]], s[1]
		if k > want {
			c.Weight = s[2]
		}
		out = append(out, c)
	}
	return out, nil
}
