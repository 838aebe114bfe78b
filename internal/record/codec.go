package record

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sanitize"
)

// state is what a frame is encoded against: the previous frame's values. A
// keyframe is encoded against the zero state, so a reader can start there.
type state struct {
	wall, mono int64
	sys        model.SystemCounters
	unreadable int
	self       model.SelfCounters
	tasks      []model.TaskCounters
	// cgroups is sorted by Path, as in model.Sample.
	cgroups []model.CgroupCounters
	// waits are the current frame's alone: looks belong to one interval,
	// so a frame without any has none.
	waits []model.WaitTally
	// last holds, for each task, how much its voluntary, involuntary,
	// run and wait counters moved in the frame before: the prediction the
	// packed counters are written against. Zero for a task new or idle.
	last []deltas
}

type deltas [4]uint64

func (s *state) reset() {
	tasks, last, cgs := s.tasks[:0], s.last[:0], s.cgroups[:0]
	rpc, ipc := s.sys.ReschedPerCPU[:0], s.sys.InterruptsPerCPU[:0]
	*s = state{tasks: tasks, last: last, cgroups: cgs}
	s.sys.ReschedPerCPU, s.sys.InterruptsPerCPU = rpc, ipc
}

// Frame field numbers.
const (
	fKeyframe   = 1
	fWall       = 2
	fMono       = 3
	fSystem     = 4
	fUnreadable = 5
	fSelf       = 6
	fTask       = 7
	fGone       = 8
	fCounters   = 9
	fCgroup     = 10
	fCgroupGone = 11
	fWait       = 12
	// fPlanes is fCounters as format 2 writes it: the run and wait
	// columns in byte planes (see planeCols).
	fPlanes = 13
)

// countersPerTask is how many varints each task takes in the packed
// counter field: its index, then seven counters. A newer writer may append
// more per task; the count that opens the field lets a reader skip them.
const (
	countersPerTask = 8
	maxPerTask      = 64
)

// planeCol reports whether column col of fPlanes is written in byte
// planes: the run and wait ns columns, whose values are mostly jitter of a
// few bytes each. All their low bytes come first, then all the next bytes
// and so on, so zstd sees like next to like; varints would interleave
// length bits with the noise.
func planeCol(col int) bool { return col == 3 || col == 4 }

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

// System field numbers.
const (
	sCtxt         = 1
	sIntr         = 2
	sRunning      = 3
	sBlocked      = 4
	sCPUs         = 5
	sResched      = 6
	sReschedPer   = 7
	sIntrPer      = 8
	sPSI          = 9
	sHasPSI       = 10
	sLoad1        = 11
	sLoad5        = 12
	sLoad15       = 13
	sPSITotal     = 14
	sHasPSITotal  = 15
	selfCPU       = 1
	selfVoluntary = 2
	selfInvol     = 3
)

// Task field numbers.
const (
	tPID      = 1
	tTID      = 2
	tReset    = 3
	tStart    = 4
	tComm     = 5
	tProcComm = 6
	tCPUs     = 7
	tVol      = 8
	tInvol    = 9
	tRun      = 10
	tWait     = 11
	tSlices   = 12
	tState    = 13
	tLastCPU  = 14
	tCgroup   = 15
)

// Cgroup field numbers.
const (
	cPath          = 1
	cHasThrottling = 2
	cPeriods       = 3
	cThrottled     = 4
	cThrottledNs   = 5
	cLimit         = 6
)

// Wait field numbers; a reason is a message of its own.
const (
	wPID     = 1
	wTID     = 2
	wLooks   = 3
	wReason  = 4
	wWchan   = 5
	wSyscall = 6
	wSettled = 7
	rWord    = 1
	rN       = 2
)

// Bounds on what a reader keeps of the cgroup and wait fields: a cgroup
// path is at most PATH_MAX, a kernel symbol far less; a frame's waits are
// the few hottest threads', each with a handful of reasons.
const (
	maxString  = 4096
	maxCgroups = 1 << 16
	maxWaits   = 1 << 12
	maxReasons = 64
)

// readString is a string from a file: cut to maxString bytes, then made
// safe to print.
func readString(b []byte) string {
	if len(b) > maxString {
		b = b[:maxString]
	}
	return sanitize.Name(string(b))
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
	wait      []byte
	reason    []byte
	cols      [countersPerTask][]uint64
	nextLast  []deltas
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
	b = appendZ(b, fWall, wall-st.wall)
	b = appendZ(b, fMono, mono-st.mono)
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
			if *p != *c {
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
		counters = protowire.AppendVarint(counters, countersPerTask)
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
	b = e.appendCgroups(b, s.Cgroups)
	b = e.appendWaits(b, s.Waits)
	st.tasks = append(st.tasks[:0], cur...)
	e.nextLast, st.last = st.last, last
	e.scratch = b
	dst = protowire.AppendVarint(dst, uint64(len(b)))
	return append(dst, b...), nil
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
	e.task = b
	return b
}

// decoder applies frames to its state. Every value it keeps was checked
// against the bounds above, so no input makes it allocate more than the
// input's own size allows.
type decoder struct {
	st       state
	next     []model.TaskCounters
	nextLast []deltas
	recs     []taskRec
	cgRecs   []cgroupRec
	// synced is false until a keyframe: before one, deltas have no base.
	synced bool
}

type taskRec struct {
	pid, tid, idx                   int
	reset                           bool
	start                           uint64
	comm, pcomm, cpus, cg           string
	hasComm, hasPComm, hasCP, hasCg bool
	dv, di, dr, dw, ds              uint64
	dState, dLast                   int64
}

func corrupt(what string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(what, args...))
}

// isKeyframe reports whether frame b starts with the keyframe mark, which
// the writer puts first.
func isKeyframe(b []byte) bool {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != fKeyframe || typ != protowire.VarintType {
		return false
	}
	v, m := protowire.ConsumeVarint(b[n:])
	return m > 0 && v == 1
}

// field is one decoded top-level field.
type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64
	b   []byte
}

// nextField consumes one field, skipping the value of a type it does not
// use: that is how a reader passes over fields a newer writer added.
func nextField(b []byte) (field, int, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, 0, corrupt("bad field tag")
	}
	f := field{num: num, typ: typ}
	var m int
	switch typ {
	case protowire.VarintType:
		f.v, m = protowire.ConsumeVarint(b[n:])
	case protowire.Fixed64Type:
		f.v, m = protowire.ConsumeFixed64(b[n:])
	case protowire.BytesType:
		f.b, m = protowire.ConsumeBytes(b[n:])
	default:
		m = protowire.ConsumeFieldValue(num, typ, b[n:])
	}
	if m < 0 {
		return field{}, 0, corrupt("field %d: bad value", num)
	}
	return f, n + m, nil
}

func (f field) z() int64 { return protowire.DecodeZigZag(f.v) }

// apply decodes frame b onto d.st.
func (d *decoder) apply(b []byte) error {
	key := isKeyframe(b)
	if key {
		d.st.reset()
		d.synced = true
	}
	if !d.synced {
		return corrupt("delta frame with no keyframe before it")
	}
	st := &d.st
	d.recs = d.recs[:0]
	d.cgRecs = d.cgRecs[:0]
	// A new slice each frame: a sample handed out keeps its waits.
	st.waits = nil
	var gone []byte
	lastWaitPID := 0
	lastPID := 0
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return err
		}
		b = b[n:]
		switch {
		case f.num == fWall && f.typ == protowire.VarintType:
			st.wall += f.z()
		case f.num == fMono && f.typ == protowire.VarintType:
			st.mono += f.z()
		case f.num == fSystem && f.typ == protowire.BytesType:
			if err := d.applySystem(f.b); err != nil {
				return err
			}
		case f.num == fUnreadable && f.typ == protowire.VarintType:
			st.unreadable = clampInt(int64(st.unreadable) + f.z())
		case f.num == fSelf && f.typ == protowire.BytesType:
			if err := d.applySelf(f.b); err != nil {
				return err
			}
		case f.num == fTask && f.typ == protowire.BytesType:
			r, err := parseTask(f.b, lastPID)
			if err != nil {
				return err
			}
			if len(d.recs) >= MaxTasks {
				return corrupt("more than %d tasks in one frame", MaxTasks)
			}
			d.recs = append(d.recs, r)
			lastPID = r.pid
		case f.num == fGone && f.typ == protowire.BytesType:
			gone = f.b
		case (f.num == fCounters || f.num == fPlanes) && f.typ == protowire.BytesType:
			if err := d.parseCounters(f.b, f.num == fPlanes); err != nil {
				return err
			}
		case f.num == fCgroup && f.typ == protowire.BytesType:
			r, err := parseCgroup(f.b)
			if err != nil {
				return err
			}
			if len(d.cgRecs) >= maxCgroups {
				return corrupt("more than %d cgroups in one frame", maxCgroups)
			}
			d.cgRecs = append(d.cgRecs, r)
		case f.num == fCgroupGone && f.typ == protowire.BytesType:
			if len(d.cgRecs) >= maxCgroups {
				return corrupt("more than %d cgroups in one frame", maxCgroups)
			}
			d.cgRecs = append(d.cgRecs, cgroupRec{gone: true, path: readString(f.b)})
		case f.num == fWait && f.typ == protowire.BytesType:
			w, err := parseWait(f.b, lastWaitPID)
			if err != nil {
				return err
			}
			if len(st.waits) >= maxWaits {
				return corrupt("more than %d threads with wait looks in one frame", maxWaits)
			}
			st.waits = append(st.waits, w)
			lastWaitPID = w.PID
		}
	}
	if err := d.applyCgroups(d.cgRecs); err != nil {
		return err
	}
	// Task records and packed counters are each sorted; together, sort.
	slices.SortFunc(d.recs, func(a, b taskRec) int {
		if a.pid != b.pid {
			return cmp.Compare(a.pid, b.pid)
		}
		return cmp.Compare(a.tid, b.tid)
	})
	for i := 1; i < len(d.recs); i++ {
		if d.recs[i].pid == d.recs[i-1].pid && d.recs[i].tid == d.recs[i-1].tid {
			return corrupt("task %d/%d twice in one frame", d.recs[i].pid, d.recs[i].tid)
		}
	}
	return d.merge(gone)
}

// parseCounters reads the packed counters of known tasks: k columns of m
// values each, varints; with planes, the run and wait columns in byte
// planes.
func (d *decoder) parseCounters(b []byte, planes bool) error {
	k, n := protowire.ConsumeVarint(b)
	if n < 0 || k < countersPerTask || k > maxPerTask {
		return corrupt("packed counters: %d values per task", k)
	}
	b = b[n:]
	m, n := protowire.ConsumeVarint(b)
	// Every task's index takes at least a byte: a count past the bytes is
	// a lie.
	if n < 0 || m > uint64(len(b)) {
		return corrupt("packed counters: %d tasks", m)
	}
	b = b[n:]
	old, last := d.st.tasks, d.st.last
	base := len(d.recs)
	if base+int(m) > MaxTasks {
		return corrupt("more than %d tasks in one frame", MaxTasks)
	}
	for col := range int(k) {
		if col > 0 && planes && planeCol(col) {
			p, n := protowire.ConsumeVarint(b)
			// Planes are read where they lie: the count is checked
			// against the bytes before any is read, and nothing is
			// allocated for them.
			if n < 0 || p > 8 || p*m > uint64(len(b)-n) {
				return corrupt("packed counters: %d byte planes of %d tasks", p, m)
			}
			b = b[n:]
			for i := range int(m) {
				var v uint64
				for j := range int(p) {
					v |= uint64(b[j*int(m)+i]) << (8 * j)
				}
				d.recs[base+i].setCounter(col, v, &last[d.recs[base+i].idx])
			}
			b = b[int(p)*int(m):]
			continue
		}
		idx := -1
		for i := range int(m) {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return corrupt("packed counters cut short")
			}
			b = b[n:]
			if col == 0 {
				if v >= uint64(len(old)-idx-1) {
					return corrupt("packed counters: task index past %d tasks", len(old))
				}
				idx += 1 + int(v)
				d.recs = append(d.recs, taskRec{pid: old[idx].PID, tid: old[idx].TID, idx: idx})
				continue
			}
			d.recs[base+i].setCounter(col, v, &last[d.recs[base+i].idx])
		}
	}
	return nil
}

// setCounter sets the value of packed column col (1 on) from its
// zigzagged v; before is how far the task's counters moved the frame
// before.
func (r *taskRec) setCounter(col int, v uint64, before *deltas) {
	z := protowire.DecodeZigZag(v)
	switch col {
	case 1:
		r.dv = before[0] + uint64(z)
	case 2:
		r.di = before[1] + uint64(z)
	case 3:
		r.dr = before[2] + uint64(z)
	case 4:
		r.dw = before[3] + uint64(z)
	case 5:
		r.ds = uint64(z) + r.dv + r.di
	case 6:
		r.dState = z
	case 7:
		r.dLast = z
	}
}

func parseTask(b []byte, lastPID int) (taskRec, error) {
	r := taskRec{pid: lastPID}
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return r, err
		}
		b = b[n:]
		if f.typ == protowire.BytesType {
			s := readString(f.b)
			switch f.num {
			case tComm:
				r.comm, r.hasComm = s, true
			case tProcComm:
				r.pcomm, r.hasPComm = s, true
			case tCPUs:
				r.cpus, r.hasCP = s, true
			case tCgroup:
				r.cg, r.hasCg = s, true
			}
			continue
		}
		if f.typ != protowire.VarintType {
			continue
		}
		switch f.num {
		case tPID:
			r.pid = clampInt(int64(lastPID) + f.z())
		case tTID:
			r.tid = int(f.z())
		case tReset:
			r.reset = f.v == 1
		case tStart:
			r.start = uint64(f.z())
		case tVol:
			r.dv = uint64(f.z())
		case tInvol:
			r.di = uint64(f.z())
		case tRun:
			r.dr = uint64(f.z())
		case tWait:
			r.dw = uint64(f.z())
		case tSlices:
			r.ds = uint64(f.z())
		case tState:
			r.dState = f.z()
		case tLastCPU:
			r.dLast = f.z()
		}
	}
	r.tid = clampInt(int64(r.pid) + int64(clampInt(int64(r.tid))))
	if r.pid <= 0 || r.tid <= 0 {
		return r, corrupt("task %d/%d: not a PID", r.pid, r.tid)
	}
	return r, nil
}

func (d *decoder) applySystem(b []byte) error {
	s := &d.st.sys
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return err
		}
		b = b[n:]
		switch f.typ {
		case protowire.VarintType:
			z := f.z()
			switch f.num {
			case sCtxt:
				s.ContextSwitches += uint64(z)
			case sIntr:
				s.Interrupts += uint64(z)
			case sRunning:
				s.ProcsRunning += uint64(z)
			case sBlocked:
				s.ProcsBlocked += uint64(z)
			case sCPUs:
				s.CPUs = clampInt(int64(s.CPUs) + z)
				if s.CPUs < 0 || s.CPUs > maxCPUs {
					return corrupt("%d CPUs", s.CPUs)
				}
			case sResched:
				s.ReschedIPIs += uint64(z)
			case sHasPSI:
				s.HasPSI = f.v == 1
			case sPSITotal:
				s.PSICPUSomeTotalUs += uint64(z)
			case sHasPSITotal:
				s.HasPSITotal = f.v == 1
			}
		case protowire.Fixed64Type:
			v := math.Float64frombits(f.v)
			switch f.num {
			case sPSI:
				s.PSICPUSomeAvg10 = v
			case sLoad1:
				s.LoadAvg[0] = v
			case sLoad5:
				s.LoadAvg[1] = v
			case sLoad15:
				s.LoadAvg[2] = v
			}
		case protowire.BytesType:
			var err error
			switch f.num {
			case sReschedPer:
				s.ReschedPerCPU, err = applyPerCPU(s.ReschedPerCPU, f.b)
			case sIntrPer:
				s.InterruptsPerCPU, err = applyPerCPU(s.InterruptsPerCPU, f.b)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// applyPerCPU replaces arr with the packed deltas in b; it grows one entry
// per value actually present, never by a claimed count.
func applyPerCPU(arr []uint64, b []byte) ([]uint64, error) {
	i := 0
	for len(b) > 0 {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return arr, corrupt("per-CPU array")
		}
		b = b[n:]
		if i >= maxCPUs {
			return arr, corrupt("more than %d CPUs", maxCPUs)
		}
		d := uint64(protowire.DecodeZigZag(v))
		if i < len(arr) {
			arr[i] += d
		} else {
			arr = append(arr, d)
		}
		i++
	}
	return arr[:i], nil
}

func (d *decoder) applySelf(b []byte) error {
	s := &d.st.self
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return err
		}
		b = b[n:]
		if f.typ != protowire.VarintType {
			continue
		}
		switch f.num {
		case selfCPU:
			s.CPUTime += timeDuration(f.z())
		case selfVoluntary:
			s.VoluntarySwitches += uint64(f.z())
		case selfInvol:
			s.InvoluntarySwitches += uint64(f.z())
		}
	}
	return nil
}

// merge builds the new task list from the old one, the frame's task
// records and its list of tasks that are gone; all three are sorted.
func (d *decoder) merge(gone []byte) error {
	old := d.st.tasks
	out := d.next[:0]
	outLast := d.nextLast[:0]
	recs := d.recs
	gonePID := 0
	nextGone := func() (pid, tid int, ok bool, err error) {
		if len(gone) == 0 {
			return 0, 0, false, nil
		}
		p, n := protowire.ConsumeVarint(gone)
		if n < 0 {
			return 0, 0, false, corrupt("gone list")
		}
		t, m := protowire.ConsumeVarint(gone[n:])
		if m < 0 {
			return 0, 0, false, corrupt("gone list")
		}
		gone = gone[n+m:]
		gonePID = clampInt(int64(gonePID) + int64(clampInt(int64(p))))
		return gonePID, clampInt(int64(gonePID) + protowire.DecodeZigZag(t)), true, nil
	}
	gp, gt, gok, err := nextGone()
	if err != nil {
		return err
	}
	i := 0
	for i < len(old) || len(recs) > 0 {
		var o *model.TaskCounters
		if i < len(old) {
			o = &old[i]
		}
		if gok {
			if o == nil || gp < o.PID || (gp == o.PID && gt < o.TID) {
				return corrupt("task %d/%d is gone but was never seen", gp, gt)
			}
			if gp == o.PID && gt == o.TID {
				i++
				if gp, gt, gok, err = nextGone(); err != nil {
					return err
				}
				continue
			}
		}
		if len(recs) > 0 {
			r := &recs[0]
			if o == nil || r.pid < o.PID || (r.pid == o.PID && r.tid < o.TID) {
				if !r.reset {
					return corrupt("update for task %d/%d that was never seen", r.pid, r.tid)
				}
				out = append(out, r.applyTo(model.TaskCounters{}))
				outLast = append(outLast, deltas{})
				recs = recs[1:]
				continue
			}
			if r.pid == o.PID && r.tid == o.TID {
				base, moved := *o, deltas{r.dv, r.di, r.dr, r.dw}
				if r.reset {
					base, moved = model.TaskCounters{}, deltas{}
				}
				out = append(out, r.applyTo(base))
				outLast = append(outLast, moved)
				recs = recs[1:]
				i++
				continue
			}
		}
		out = append(out, *o)
		outLast = append(outLast, deltas{})
		i++
		if len(out) > MaxTasks {
			return corrupt("more than %d tasks", MaxTasks)
		}
	}
	if gok {
		return corrupt("task %d/%d is gone but was never seen", gp, gt)
	}
	d.next, d.st.tasks = old, out
	d.nextLast, d.st.last = d.st.last, outLast
	return nil
}

func (r *taskRec) applyTo(t model.TaskCounters) model.TaskCounters {
	t.PID, t.TID = r.pid, r.tid
	if r.reset {
		t.StartTime = r.start
	}
	if r.hasComm {
		t.Comm = r.comm
	}
	if r.hasPComm {
		t.ProcessComm = r.pcomm
	}
	if r.hasCP {
		t.CPUsAllowed = r.cpus
	}
	if r.hasCg {
		t.Cgroup = r.cg
	}
	t.VoluntarySwitches += r.dv
	t.InvoluntarySwitches += r.di
	t.RunNs += r.dr
	t.WaitNs += r.dw
	t.Timeslices += r.ds
	t.State = byte(int64(t.State) + r.dState)
	t.LastCPU = clampInt(int64(t.LastCPU) + r.dLast)
	return t
}

func timeDuration(ns int64) time.Duration { return time.Duration(ns) }

// sample fills dst from the decoder's state. dst gets its own copies of the
// per-CPU arrays and cgroups, and the frame's waits, which nothing changes
// later; its Tasks share the decoder's buffer, which stays valid
// until the second apply after this one.
func (d *decoder) sample(dst *model.Sample, loc *time.Location) {
	sys := d.st.sys
	sys.ReschedPerCPU = append(dst.System.ReschedPerCPU[:0], sys.ReschedPerCPU...)
	sys.InterruptsPerCPU = append(dst.System.InterruptsPerCPU[:0], sys.InterruptsPerCPU...)
	cgs := append(dst.Cgroups[:0], d.st.cgroups...)
	*dst = model.Sample{
		Time:       time.Unix(0, d.st.wall).In(loc),
		System:     sys,
		Tasks:      d.st.tasks,
		Unreadable: d.st.unreadable,
		Self:       d.st.self,
		Cgroups:    cgs,
		Waits:      d.st.waits,
	}
}
