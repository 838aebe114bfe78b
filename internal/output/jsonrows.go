package output

import (
	"bytes"
	"math"
	"strconv"

	"encoding/json"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
)

// jsonThread is one thread as an object whose keys are package fields'
// JSON keys, in the table's order, written into the report's scratch.
type jsonThread struct {
	t  *model.ThreadRates
	sc *threadScratch
}

// threadScratch is the buffer and encoder every thread row of a report is
// written with, one per JSON writer: a busy host's report has thousands of
// rows, and an encoder and buffer each cost a third of the report's time.
// The report's encoder copies what MarshalJSON returns before the next row
// is written.
type threadScratch struct {
	b   bytes.Buffer
	enc *json.Encoder
}

func newThreadScratch() *threadScratch {
	sc := &threadScratch{}
	sc.enc = json.NewEncoder(&sc.b)
	// As the report's own encoder: json.Marshal would escape "<>&", and
	// the report keeps a Marshaler's escapes.
	sc.enc.SetEscapeHTML(false)
	return sc
}

// key starts a member: our keys are plain ASCII, written as they are.
func (sc *threadScratch) key(first bool, k string) {
	if !first {
		sc.b.WriteByte(',')
	}
	sc.b.WriteByte('"')
	sc.b.WriteString(k)
	sc.b.WriteString(`":`)
}

// value writes v as encoding/json does; numbers and the common kinds
// without the encoder's reflection.
func (sc *threadScratch) value(v any) error {
	switch x := v.(type) {
	case float64:
		return sc.float(x)
	case int:
		sc.b.Write(strconv.AppendInt(sc.b.AvailableBuffer(), int64(x), 10))
		return nil
	case bool:
		sc.b.WriteString(strconv.FormatBool(x))
		return nil
	case *model.Why:
		return sc.why(x)
	}
	if err := sc.enc.Encode(v); err != nil {
		return err
	}
	sc.b.Truncate(sc.b.Len() - 1) // Encode ends each value with a newline
	return nil
}

// why writes a hot row's WHY as an object: {"kind":"blocking",
// "wait_pct":3, "on":[{"reason":"futex","share":0.8}], "own_frame":"..."},
// "cgroup_throttled_pct" for a throttled cgroup's thread; each part only
// when the row has it. "on" is a list, biggest share first, in the WHY
// column's short words (wait_on has the full reasons).
func (sc *threadScratch) why(w *model.Why) error {
	sc.b.WriteString(`{"kind":"`)
	sc.b.WriteString(w.Kind.String())
	sc.b.WriteByte('"')
	if w.HasWait {
		sc.key(false, "wait_pct")
		if err := sc.float(float64(w.Wait)); err != nil {
			return err
		}
	}
	if w.InThrottled || w.Kind == model.Throttled {
		sc.key(false, "cgroup_throttled_pct")
		sc.b.Write(strconv.AppendInt(sc.b.AvailableBuffer(), int64(w.Throttled), 10))
	}
	if len(w.On) > 0 {
		sc.key(false, "on")
		sc.b.WriteByte('[')
		for i, s := range w.On {
			if i > 0 {
				sc.b.WriteByte(',')
			}
			sc.b.WriteByte('{')
			sc.key(true, "reason")
			if err := sc.value(s.Reason); err != nil {
				return err
			}
			sc.key(false, "share")
			if err := sc.float(round2(s.Share)); err != nil {
				return err
			}
			sc.b.WriteByte('}')
		}
		sc.b.WriteByte(']')
	}
	if w.Own != "" {
		sc.key(false, "own_frame")
		if err := sc.value(w.Own); err != nil {
			return err
		}
	}
	sc.b.WriteByte('}')
	return nil
}

// float writes x as encoding/json does: from 1e-6 to 1e21 (and 0) as 'f'
// with the fewest digits; anything else is left to the encoder ('e').
func (sc *threadScratch) float(x float64) error {
	if a := math.Abs(x); x == 0 || a >= 1e-6 && a < 1e21 {
		sc.b.Write(strconv.AppendFloat(sc.b.AvailableBuffer(), x, 'f', -1, 64))
		return nil
	}
	if err := sc.enc.Encode(x); err != nil {
		return err
	}
	sc.b.Truncate(sc.b.Len() - 1)
	return nil
}

// MarshalJSON writes the thread's fields.
func (j jsonThread) MarshalJSON() ([]byte, error) {
	sc := j.sc
	sc.b.Reset()
	sc.b.WriteByte('{')
	first := true
	for i := range fields.Thread {
		f := &fields.Thread[i]
		if f.JSON == "" {
			continue
		}
		if f.Numeric() {
			x := round2(f.Value(j.t))
			if x == 0 && f.OmitZero {
				continue
			}
			sc.key(first, f.JSON)
			first = false
			if err := sc.float(x); err != nil {
				return nil, err
			}
			continue
		}
		v := f.JSONValue(j.t)
		if v == nil {
			continue
		}
		sc.key(first, f.JSON)
		first = false
		if err := sc.value(v); err != nil {
			return nil, err
		}
	}
	// Stacks are per-thread lists, not columns: present only with
	// --stacks, for threads the stack tracer targeted.
	if len(j.t.BlockedAt) > 0 {
		sc.key(first, "blocked_at")
		first = false
		if err := sc.value(jsonStacks(j.t.BlockedAt)); err != nil {
			return nil, err
		}
	}
	if len(j.t.WokenFrom) > 0 {
		sc.key(first, "woken_from")
		if err := sc.value(jsonStacks(j.t.WokenFrom)); err != nil {
			return nil, err
		}
	}
	sc.b.WriteByte('}')
	return sc.b.Bytes(), nil
}

// jsonRow is a process, cgroup or wake-up pair row as an object whose keys
// are its fields table's JSON keys, in the table's order, written into the
// report's scratch as thread rows are.
type jsonRow[P any] struct {
	r    P
	cols []fields.Column[P]
	sc   *threadScratch
}

// appendRows appends the rows at(0)...at(n-1) (up to top, 0 for all) as
// JSON rows of cols.
func appendRows[P any](dst []jsonRow[P], cols []fields.Column[P], n int, at func(int) P, top int, sc *threadScratch) []jsonRow[P] {
	for i := range n {
		if top > 0 && i >= top {
			break
		}
		dst = append(dst, jsonRow[P]{at(i), cols, sc})
	}
	return dst
}

// MarshalJSON writes the row's columns: numbers rounded to two decimals,
// null for a figure the row does not have.
func (j jsonRow[P]) MarshalJSON() ([]byte, error) {
	sc := j.sc
	sc.b.Reset()
	sc.b.WriteByte('{')
	first := true
	for i := range j.cols {
		c := &j.cols[i]
		if c.JSON == "" {
			continue
		}
		var err error
		switch {
		case c.Known != nil && !c.Known(j.r):
			sc.key(first, c.JSON)
			sc.b.WriteString("null")
		case c.Kind == fields.Integer:
			sc.key(first, c.JSON)
			sc.b.Write(strconv.AppendInt(sc.b.AvailableBuffer(), int64(c.Value(j.r)), 10))
		case c.Value != nil:
			sc.key(first, c.JSON)
			err = sc.float(round2(c.Value(j.r)))
		case c.Str != nil:
			sc.key(first, c.JSON)
			err = sc.value(c.Str(j.r))
		default:
			v := c.JSONValue(j.r)
			if v == nil {
				continue
			}
			sc.key(first, c.JSON)
			err = sc.value(v)
		}
		if err != nil {
			return nil, err
		}
		first = false
	}
	sc.b.WriteByte('}')
	return sc.b.Bytes(), nil
}
