package record

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
)

// appendPlanes writes vs as a plane count p (the bytes the largest value
// needs, 0 to 8), then p planes of len(vs) bytes, least significant first.
func appendPlanes(b []byte, vs []uint64) []byte {
	var all uint64
	for _, v := range vs {
		all |= v
	}
	p := 0
	for ; all != 0; all >>= 8 {
		p++
	}
	b = protowire.AppendVarint(b, uint64(p))
	for k := range p {
		for _, v := range vs {
			b = append(b, byte(v>>(8*k)))
		}
	}
	return b
}

func appendZ(b []byte, n protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeZigZag(v))
}

// appendDelta writes cur-prev; uint64 arithmetic wraps, so any pair of
// counters round-trips exactly.
func appendDelta(b []byte, n protowire.Number, prev, cur uint64) []byte {
	return appendZ(b, n, int64(cur-prev))
}

func appendStr(b []byte, n protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendF64(b []byte, n protowire.Number, prev, cur float64) []byte {
	if math.Float64bits(prev) == math.Float64bits(cur) {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(cur))
}

func appendMsg(b []byte, n protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

func taskLess(a, b *model.TaskCounters) bool {
	return a.PID < b.PID || (a.PID == b.PID && a.TID < b.TID)
}

// encoder turns Samples into frames.
type encoder struct {
	st        state
	scratch   []byte
	task      []byte
	gone      []byte
	sys, self []byte
	counters  []byte
	cgroup    []byte
	container []byte
	wait      []byte
	reason    []byte
	cols      [countersPerTask + len(fields.Counters)][]uint64
	nextLast  []deltas
	readTimes []byte
	wakeups   []byte
	pairs     []byte
	// cpuCols are the wake-up read's per-CPU switches and migrations,
	// then the previous read's.
	cpuCols [4][]uint64
	// stk is the stack tables written since the last keyframe.
	stk stackEncoder
}

// appendFrame encodes s against e.st (or against nothing when key is set)
// and leaves e.st equal to s.
func (e *encoder) appendFrame(dst []byte, s *model.Sample, mono int64, key bool) ([]byte, error) {
	for i := 1; i < len(s.Tasks); i++ {
		if !taskLess(&s.Tasks[i-1], &s.Tasks[i]) {
			return dst, fmt.Errorf("record: tasks not sorted by PID, TID at %d/%d", s.Tasks[i].PID, s.Tasks[i].TID)
		}
	}
	for i := 1; i < len(s.Cgroups); i++ {
		if s.Cgroups[i-1].Path >= s.Cgroups[i].Path {
			return dst, fmt.Errorf("record: cgroups not sorted by path at %q", s.Cgroups[i].Path)
		}
	}
	if key {
		e.st.reset()
	}
	st := &e.st
	b := e.scratch[:0]
	if key {
		b = protowire.AppendTag(b, fKeyframe, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	wall := s.Time.UnixNano()
	b = appendZ(b, fMono, mono-st.mono)
	// Both clocks move alike: the wall clock is written as how far it
	// moved apart from the monotonic one, zero until it is stepped. Zero
	// is written too: its absence means an older writer's fWall.
	b = appendZAlways(b, fWallSkew, (wall-st.wall)-(mono-st.mono))
	st.wall, st.mono = wall, mono

	sys := e.encodeSystem(&s.System)
	if len(sys) > 0 {
		b = appendMsg(b, fSystem, sys)
	}
	b = appendZ(b, fUnreadable, int64(s.Unreadable-st.unreadable))
	st.unreadable = s.Unreadable

	self := e.self[:0]
	self = appendZ(self, selfCPU, int64(s.Self.CPUTime-st.self.CPUTime))
	self = appendDelta(self, selfVoluntary, st.self.VoluntarySwitches, s.Self.VoluntarySwitches)
	self = appendDelta(self, selfInvol, st.self.InvoluntarySwitches, s.Self.InvoluntarySwitches)
	if len(self) > 0 {
		b = appendMsg(b, fSelf, self)
	}
	e.self = self
	st.self = s.Self

	// Merge-join the previous tasks with the current ones.
	prev, cur := st.tasks, s.Tasks
	gone := e.gone[:0]
	for k := range e.cols {
		e.cols[k] = e.cols[k][:0]
	}
	lastPID, lastGonePID, lastIdx := 0, 0, -1
	goneTask := func(t *model.TaskCounters) {
		gone = protowire.AppendVarint(gone, uint64(t.PID-lastGonePID))
		gone = protowire.AppendVarint(gone, protowire.EncodeZigZag(int64(t.TID-t.PID)))
		lastGonePID = t.PID
	}
	last := e.nextLast[:0]
	i := 0
	for j := range cur {
		c := &cur[j]
		for ; i < len(prev) && taskLess(&prev[i], c); i++ {
			goneTask(&prev[i])
		}
		var p *model.TaskCounters
		pi := i
		if i < len(prev) && prev[i].PID == c.PID && prev[i].TID == c.TID {
			p = &prev[i]
			i++
		}
		var d deltas
		if p != nil && p.StartTime == c.StartTime {
			d = deltas{c.VoluntarySwitches - p.VoluntarySwitches, c.InvoluntarySwitches - p.InvoluntarySwitches,
				c.RunNs - p.RunNs, c.WaitNs - p.WaitNs}
		}
		last = append(last, d)
		if p != nil && p.StartTime == c.StartTime && p.Comm == c.Comm && p.ProcessComm == c.ProcessComm && p.CPUsAllowed == c.CPUsAllowed && p.Cgroup == c.Cgroup {
			// The common case, a known task that ran: its counters only.
			// Read times have a field of their own, so a task that did
			// not move costs nothing.
			if !sameCounters(p, c) {
				e.addCounters(p, c, pi-lastIdx-1, &st.last[pi], &d)
				lastIdx = pi
			}
			continue
		}
		b = appendMsg(b, fTask, e.encodeTask(p, c, lastPID))
		lastPID = c.PID
	}
	for ; i < len(prev); i++ {
		goneTask(&prev[i])
	}
	if len(gone) > 0 {
		b = appendMsg(b, fGone, gone)
	}
	if m := len(e.cols[0]); m > 0 {
		// Column by column: the same tasks' indexes repeat frame after
		// frame, and the small fields sit together, where zstd finds them.
		counters := e.counters[:0]
		counters = protowire.AppendVarint(counters, uint64(len(e.cols)))
		counters = protowire.AppendVarint(counters, uint64(m))
		for k := range e.cols {
			if planeCol(k) {
				counters = appendPlanes(counters, e.cols[k])
				continue
			}
			for _, v := range e.cols[k] {
				counters = protowire.AppendVarint(counters, v)
			}
		}
		b = appendMsg(b, fPlanes, counters)
		e.counters = counters
	}
	e.gone = gone
	b, err := e.appendReadTimes(b, cur)
	if err != nil {
		return dst, err
	}
	b = e.appendCgroups(b, s.Cgroups)
	b = e.appendWaits(b, s.Waits)
	if s.Source != "" {
		b = appendStr(b, fSource, s.Source)
	}
	if b, err = e.appendWakeups(b, s); err != nil {
		return dst, err
	}
	if b, err = e.appendStacks(b, s, key); err != nil {
		return dst, err
	}
	st.tasks = append(st.tasks[:0], cur...)
	e.nextLast, st.last = st.last, last
	e.scratch = b
	dst = protowire.AppendVarint(dst, uint64(len(b)))
	return append(dst, b...), nil
}

// sameCounters reports whether p and c hold the same counters and
// identity, whenever each was read.
func sameCounters(p, c *model.TaskCounters) bool {
	q := *p
	q.ReadAt = c.ReadAt
	return q == *c
}

// appendReadTimes writes when each task's counters were read (frame field
// 14): a unit, the largest power of two that divides every read time, then
// for each task whose read time differs from the task's before it in the
// list (the first from zero), its index as the gap from the last one
// written and the difference in units. The sampler stamps a task that did
// not move with the last clock reading, so most tasks cost nothing and the
// rest a few bits: the reading steps up a grain at a time along the pass.
// All zero (an older sampler, a fixture), the field is left out.
func (e *encoder) appendReadTimes(b []byte, tasks []model.TaskCounters) ([]byte, error) {
	var all uint64
	for i := range tasks {
		t := &tasks[i]
		if t.ReadAt < 0 || t.ReadAt > maxReadAt {
			return b, fmt.Errorf("record: task %d/%d read %v after its sample's time, outside 0 to %v", t.PID, t.TID, t.ReadAt, maxReadAt)
		}
		all |= uint64(t.ReadAt)
	}
	if all == 0 {
		return b, nil
	}
	shift := bits.TrailingZeros64(all)
	rt := protowire.AppendVarint(e.readTimes[:0], uint64(shift))
	var pred time.Duration
	last := -1
	for i := range tasks {
		r := tasks[i].ReadAt
		if r == pred {
			continue
		}
		rt = protowire.AppendVarint(rt, uint64(i-last-1))
		rt = protowire.AppendVarint(rt, protowire.EncodeZigZag(int64(r-pred)>>shift))
		last, pred = i, r
	}
	e.readTimes = rt
	return appendMsg(b, fReadTimes, rt), nil
}

func (e *encoder) encodeSystem(c *model.SystemCounters) []byte {
	p := &e.st.sys
	b := e.sys[:0]
	b = appendDelta(b, sCtxt, p.ContextSwitches, c.ContextSwitches)
	b = appendDelta(b, sIntr, p.Interrupts, c.Interrupts)
	b = appendDelta(b, sRunning, p.ProcsRunning, c.ProcsRunning)
	b = appendDelta(b, sBlocked, p.ProcsBlocked, c.ProcsBlocked)
	b = appendZ(b, sCPUs, int64(c.CPUs-p.CPUs))
	b = appendDelta(b, sResched, p.ReschedIPIs, c.ReschedIPIs)
	b = appendPerCPU(b, sReschedPer, p.ReschedPerCPU, c.ReschedPerCPU)
	b = appendPerCPU(b, sIntrPer, p.InterruptsPerCPU, c.InterruptsPerCPU)
	b = appendF64(b, sPSI, p.PSICPUSomeAvg10, c.PSICPUSomeAvg10)
	if p.HasPSI != c.HasPSI {
		b = protowire.AppendTag(b, sHasPSI, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(c.HasPSI))
	}
	b = appendF64(b, sLoad1, p.LoadAvg[0], c.LoadAvg[0])
	b = appendF64(b, sLoad5, p.LoadAvg[1], c.LoadAvg[1])
	b = appendF64(b, sLoad15, p.LoadAvg[2], c.LoadAvg[2])
	b = appendDelta(b, sPSITotal, p.PSICPUSomeTotalUs, c.PSICPUSomeTotalUs)
	if p.HasPSITotal != c.HasPSITotal {
		b = protowire.AppendTag(b, sHasPSITotal, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(c.HasPSITotal))
	}
	if p.Unread != c.Unread {
		b = protowire.AppendTag(b, sUnread, protowire.BytesType)
		b = protowire.AppendString(b, c.Unread)
	}
	rpc, ipc := p.ReschedPerCPU, p.InterruptsPerCPU
	*p = *c
	p.ReschedPerCPU = append(rpc[:0], c.ReschedPerCPU...)
	p.InterruptsPerCPU = append(ipc[:0], c.InterruptsPerCPU...)
	e.sys = b
	return b
}

// appendPerCPU writes the whole array, each entry as a delta from the
// previous one at its index, when any entry or the length changed.
func appendPerCPU(b []byte, n protowire.Number, prev, cur []uint64) []byte {
	if len(prev) == len(cur) {
		same := true
		for i := range cur {
			if cur[i] != prev[i] {
				same = false
				break
			}
		}
		if same {
			return b
		}
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	size := 0
	for i := range cur {
		size += protowire.SizeVarint(protowire.EncodeZigZag(int64(cur[i] - at(prev, i))))
	}
	b = protowire.AppendVarint(b, uint64(size))
	for i := range cur {
		b = protowire.AppendVarint(b, protowire.EncodeZigZag(int64(cur[i]-at(prev, i))))
	}
	return b
}

func at(s []uint64, i int) uint64 {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// appendCounters writes a known task's counters: its index in the previous
// frame's task list (as the gap from the last one written), then how far
// each counter's move differs from its move the frame before: a thread
// that keeps a steady pace costs a few bits per counter.
func (e *encoder) addCounters(p, c *model.TaskCounters, gap int, before, now *deltas) {
	z := protowire.EncodeZigZag
	e.cols[0] = append(e.cols[0], uint64(gap))
	for k := range now {
		e.cols[1+k] = append(e.cols[1+k], z(int64(now[k]-before[k])))
	}
	dv, di := now[0], now[1]
	// Each time a thread is scheduled in it was switched out before: the
	// timeslice count moves with the switch counts, so only the
	// difference from their sum is written.
	e.cols[5] = append(e.cols[5], z(int64(c.Timeslices-p.Timeslices-dv-di)))
	e.cols[6] = append(e.cols[6], z(int64(c.State)-int64(p.State)))
	e.cols[7] = append(e.cols[7], z(int64(c.LastCPU-p.LastCPU)))
	for x := range fields.Counters {
		e.cols[countersPerTask+x] = append(e.cols[countersPerTask+x], z(int64(c.Counters[x]-p.Counters[x])))
	}
}

// encodeTask writes a task record: all of c for a task first seen (nil p)
// or a reused TID (another start time), else what changed since p. The
// caller sends only those and tasks whose names, CPUs or cgroup changed,
// so the record is never empty.
func (e *encoder) encodeTask(p, c *model.TaskCounters, lastPID int) []byte {
	var zero model.TaskCounters
	reset := p == nil || p.StartTime != c.StartTime
	if reset {
		p = &zero
	}
	b := e.task[:0]
	b = appendZ(b, tPID, int64(c.PID-lastPID))
	b = appendZ(b, tTID, int64(c.TID-c.PID))
	if reset {
		b = protowire.AppendTag(b, tReset, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
		b = appendDelta(b, tStart, 0, c.StartTime)
	}
	if reset || p.Comm != c.Comm {
		b = appendStr(b, tComm, c.Comm)
	}
	if reset || p.ProcessComm != c.ProcessComm {
		b = appendStr(b, tProcComm, c.ProcessComm)
	}
	if reset || p.CPUsAllowed != c.CPUsAllowed {
		b = appendStr(b, tCPUs, c.CPUsAllowed)
	}
	// The cgroup is identity too: written when first seen (unless none is
	// known) and when the task moves.
	if p.Cgroup != c.Cgroup {
		b = appendStr(b, tCgroup, c.Cgroup)
	}
	b = appendDelta(b, tVol, p.VoluntarySwitches, c.VoluntarySwitches)
	b = appendDelta(b, tInvol, p.InvoluntarySwitches, c.InvoluntarySwitches)
	b = appendDelta(b, tRun, p.RunNs, c.RunNs)
	b = appendDelta(b, tWait, p.WaitNs, c.WaitNs)
	b = appendDelta(b, tSlices, p.Timeslices, c.Timeslices)
	b = appendZ(b, tState, int64(c.State)-int64(p.State))
	b = appendZ(b, tLastCPU, int64(c.LastCPU-p.LastCPU))
	for x := range fields.Counters {
		b = appendDelta(b, protowire.Number(fields.Counters[x].TaskField), p.Counters[x], c.Counters[x])
	}
	e.task = b
	return b
}
