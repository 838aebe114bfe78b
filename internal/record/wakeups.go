package record

import (
	"fmt"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/model"
)

// Wake-up message field numbers (frame field 15).
const (
	kTime       = 1
	kSince      = 2
	kDropped    = 3
	kSwitches   = 4
	kMigrations = 5
	kPairs      = 6
	kNames      = 7
	kNoTime     = 8
	nPair       = 1
	nWaker      = 2
	nWakee      = 3
)

// pairCols is how many varints each pair takes in the packed pairs before
// its latency counts: waker PID, waker TID, wakee PID, wakee TID, wake-ups,
// resolved, cross-CPU, and the bitmap of its non-zero latency buckets. A
// newer writer may add columns; the count that opens the field lets a
// reader skip them.
const pairCols = 8

// maxPairs bounds the pairs a frame may hold: four times the tracer's map,
// which drains at every read.
const maxPairs = 1 << 16

// appendWakeups writes s.Wakeups (frame field 15), or nothing when the
// tracer was off. Pairs are counts of the interval alone, so every pair is
// written; the per-CPU totals and the dropped count are running totals,
// written against the last frame that had them.
func (e *encoder) appendWakeups(b []byte, s *model.Sample) ([]byte, error) {
	w := s.Wakeups
	e.st.wakeups = w
	if w == nil {
		return b, nil
	}
	if len(w.Pairs) > maxPairs || len(w.CPUs) > maxCPUs {
		return b, fmt.Errorf("record: %d wake-up pairs over %d CPUs, past %d and %d", len(w.Pairs), len(w.CPUs), maxPairs, maxCPUs)
	}
	st := &e.st
	m := e.wakeups[:0]
	if w.Time.IsZero() {
		m = protowire.AppendTag(m, kNoTime, protowire.VarintType)
		m = protowire.AppendVarint(m, 1)
	} else {
		m = appendZAlways(m, kTime, int64(w.Time.Sub(s.Time)))
	}
	if !w.Since.IsZero() {
		m = appendZAlways(m, kSince, int64(w.Since.Sub(s.Time)))
	}
	m = appendDelta(m, kDropped, st.wakeDropped, w.Dropped)
	cols := &e.cpuCols
	for k := range cols {
		cols[k] = cols[k][:0]
	}
	for _, c := range w.CPUs {
		cols[0], cols[1] = append(cols[0], c.Switches), append(cols[1], c.Migrations)
	}
	for _, c := range st.wakeCPUs {
		cols[2], cols[3] = append(cols[2], c.Switches), append(cols[3], c.Migrations)
	}
	m = appendPerCPU(m, kSwitches, cols[2], cols[0])
	m = appendPerCPU(m, kMigrations, cols[3], cols[1])
	st.wakeDropped = w.Dropped
	st.wakeCPUs = append(st.wakeCPUs[:0], w.CPUs...)

	if n := len(w.Pairs); n > 0 {
		p := protowire.AppendVarint(e.pairs[:0], pairCols)
		p = protowire.AppendVarint(p, uint64(n))
		z := func(v int) uint64 { return protowire.EncodeZigZag(int64(v)) }
		col := func(f func(*model.WakeupPairCount) uint64) {
			for i := range w.Pairs {
				p = protowire.AppendVarint(p, f(&w.Pairs[i]))
			}
		}
		lastPID := 0
		col(func(q *model.WakeupPairCount) uint64 { v := z(q.WakerPID - lastPID); lastPID = q.WakerPID; return v })
		col(func(q *model.WakeupPairCount) uint64 { return z(q.WakerTID - q.WakerPID) })
		col(func(q *model.WakeupPairCount) uint64 { return z(q.WakeePID - q.WakerPID) })
		col(func(q *model.WakeupPairCount) uint64 { return z(q.WakeeTID - q.WakeePID) })
		col(func(q *model.WakeupPairCount) uint64 { return q.Wakeups })
		col(func(q *model.WakeupPairCount) uint64 { return q.Resolved })
		col(func(q *model.WakeupPairCount) uint64 { return q.CrossCPU })
		col(func(q *model.WakeupPairCount) uint64 {
			var set uint64
			for k, c := range q.Latency {
				if c != 0 {
					set |= 1 << k
				}
			}
			return set
		})
		// The counts, bucket by bucket across the pairs: a bucket's
		// counts are alike from pair to pair.
		for k := range model.LatencyBuckets {
			for i := range w.Pairs {
				if c := w.Pairs[i].Latency[k]; c != 0 {
					p = protowire.AppendVarint(p, c)
				}
			}
		}
		e.pairs = p
		m = appendMsg(m, kPairs, p)
	}
	// A name is written only where the frame's task list does not give
	// it: for most pairs, both ends are threads the sampler read.
	for i := range w.Pairs {
		q := &w.Pairs[i]
		er, ee := q.WakerComm != commOf(s.Tasks, q.WakerPID, q.WakerTID), q.WakeeComm != commOf(s.Tasks, q.WakeePID, q.WakeeTID)
		if !er && !ee {
			continue
		}
		var n []byte
		n = protowire.AppendTag(n, nPair, protowire.VarintType)
		n = protowire.AppendVarint(n, uint64(i))
		if er {
			n = appendStr(n, nWaker, q.WakerComm)
		}
		if ee {
			n = appendStr(n, nWakee, q.WakeeComm)
		}
		m = appendMsg(m, kNames, n)
	}
	e.wakeups = m
	return appendMsg(b, fWakeups, m), nil
}

// appendZAlways writes v even when it is zero: a present zero differs from
// an absent field.
func appendZAlways(b []byte, n protowire.Number, v int64) []byte {
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeZigZag(v))
}

// commOf is the name tasks (sorted by PID, TID) give pid/tid, "" when none.
func commOf(tasks []model.TaskCounters, pid, tid int) string {
	i, ok := slices.BinarySearchFunc(tasks, [2]int{pid, tid}, func(t model.TaskCounters, k [2]int) int {
		if t.PID != k[0] {
			return t.PID - k[0]
		}
		return t.TID - k[1]
	})
	if !ok {
		return ""
	}
	return tasks[i].Comm
}

// applyWakeups decodes a wake-up message onto d.st; the frame's task list
// must be merged already, since it names most pairs' threads, and its wall
// clock applied, since the read's times are offsets from it.
func (d *decoder) applyWakeups(b []byte) error {
	st := &d.st
	w := &model.WakeupSample{}
	base := time.Unix(0, st.wall)
	var timeOff, sinceOff int64
	hasTime, hasSince := true, false
	var pairs []byte
	var names [][]byte
	sw, mig := cpuColumn(st.wakeCPUs, true), cpuColumn(st.wakeCPUs, false)
	var err error
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return err
		}
		b = b[n:]
		switch {
		case f.num == kTime && f.typ == protowire.VarintType:
			timeOff = f.z()
		case f.num == kNoTime && f.typ == protowire.VarintType:
			hasTime = f.v != 1
		case f.num == kSince && f.typ == protowire.VarintType:
			sinceOff, hasSince = f.z(), true
		case f.num == kDropped && f.typ == protowire.VarintType:
			st.wakeDropped += uint64(f.z())
		case f.num == kSwitches && f.typ == protowire.BytesType:
			if sw, err = applyPerCPU(sw, f.b); err != nil {
				return err
			}
		case f.num == kMigrations && f.typ == protowire.BytesType:
			if mig, err = applyPerCPU(mig, f.b); err != nil {
				return err
			}
		case f.num == kPairs && f.typ == protowire.BytesType:
			pairs = f.b
		case f.num == kNames && f.typ == protowire.BytesType:
			if len(names) >= maxPairs {
				return corrupt("more than %d wake-up names in one frame", maxPairs)
			}
			names = append(names, f.b)
		}
	}
	if len(sw) != len(mig) {
		return corrupt("wake-ups: switches of %d CPUs, migrations of %d", len(sw), len(mig))
	}
	st.wakeCPUs = st.wakeCPUs[:0]
	for i := range sw {
		st.wakeCPUs = append(st.wakeCPUs, model.CPUSchedCount{Switches: sw[i], Migrations: mig[i]})
	}
	if hasTime {
		w.Time = base.Add(time.Duration(timeOff))
	}
	if hasSince {
		w.Since = base.Add(time.Duration(sinceOff))
	}
	w.Dropped = st.wakeDropped
	w.CPUs = slices.Clone(st.wakeCPUs)
	if w.Pairs, err = parsePairs(pairs); err != nil {
		return err
	}
	for i := range w.Pairs {
		q := &w.Pairs[i]
		q.WakerComm, q.WakeeComm = commOf(st.tasks, q.WakerPID, q.WakerTID), commOf(st.tasks, q.WakeePID, q.WakeeTID)
	}
	for _, nb := range names {
		if err := applyName(w.Pairs, nb); err != nil {
			return err
		}
	}
	st.wakeups = w
	return nil
}

// cpuColumn is one column of the per-CPU totals, as applyPerCPU updates it.
func cpuColumn(cs []model.CPUSchedCount, switches bool) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.Migrations
		if switches {
			out[i] = c.Switches
		}
	}
	return out
}

// parsePairs reads the packed pairs. A pair takes at least a byte per
// column, so a count the bytes cannot hold is refused before anything is
// allocated for it.
func parsePairs(b []byte) ([]model.WakeupPairCount, error) {
	if len(b) == 0 {
		return nil, nil
	}
	k, n := protowire.ConsumeVarint(b)
	if n < 0 || k < pairCols || k > maxPerTask {
		return nil, corrupt("wake-up pairs: %d values per pair", k)
	}
	b = b[n:]
	m, n := protowire.ConsumeVarint(b)
	if n < 0 || m > maxPairs || m*k > uint64(len(b)-n) {
		return nil, corrupt("wake-up pairs: %d pairs in %d bytes", m, len(b))
	}
	b = b[n:]
	pairs := make([]model.WakeupPairCount, m)
	sets := make([]uint64, m)
	next := func() (uint64, error) {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return 0, corrupt("wake-up pairs cut short")
		}
		b = b[n:]
		return v, nil
	}
	lastPID := 0
	for col := range int(k) {
		for i := range pairs {
			v, err := next()
			if err != nil {
				return nil, err
			}
			q := &pairs[i]
			z := protowire.DecodeZigZag(v)
			switch col {
			case 0:
				q.WakerPID = clampInt(int64(lastPID) + z)
				lastPID = q.WakerPID
			case 1:
				q.WakerTID = clampInt(int64(q.WakerPID) + z)
			case 2:
				q.WakeePID = clampInt(int64(q.WakerPID) + z)
			case 3:
				q.WakeeTID = clampInt(int64(q.WakeePID) + z)
			case 4:
				q.Wakeups = v
			case 5:
				q.Resolved = v
			case 6:
				q.CrossCPU = v
			case 7:
				if v>>model.LatencyBuckets != 0 {
					return nil, corrupt("wake-up pairs: latency bucket past %d", model.LatencyBuckets)
				}
				sets[i] = v
			}
		}
	}
	for bucket := range model.LatencyBuckets {
		for i := range pairs {
			if sets[i]&(1<<bucket) == 0 {
				continue
			}
			v, err := next()
			if err != nil {
				return nil, err
			}
			pairs[i].Latency[bucket] = v
		}
	}
	if len(b) != 0 {
		return nil, corrupt("wake-up pairs: %d bytes past the last count", len(b))
	}
	return pairs, nil
}

// applyName sets the names one names message gives a pair.
func applyName(pairs []model.WakeupPairCount, b []byte) error {
	idx := -1
	var waker, wakee string
	var hasWaker, hasWakee bool
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return err
		}
		b = b[n:]
		switch {
		case f.num == nPair && f.typ == protowire.VarintType:
			if f.v >= uint64(len(pairs)) {
				return corrupt("wake-up name for pair %d of %d", f.v, len(pairs))
			}
			idx = int(f.v)
		case f.num == nWaker && f.typ == protowire.BytesType:
			waker, hasWaker = readString(f.b), true
		case f.num == nWakee && f.typ == protowire.BytesType:
			wakee, hasWakee = readString(f.b), true
		}
	}
	if idx < 0 {
		return corrupt("wake-up name without its pair")
	}
	if hasWaker {
		pairs[idx].WakerComm = waker
	}
	if hasWakee {
		pairs[idx].WakeeComm = wakee
	}
	return nil
}
