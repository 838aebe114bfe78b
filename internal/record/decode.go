package record

import (
	"cmp"
	"math"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/fields"
	"github.com/ctxtop/ctxtop/internal/model"
)

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
	// curShape and nextShape name the task lists st.tasks and next hold:
	// equal and not zero, the two hold the same tasks in the same places,
	// so merge can bring next up to date by the few places that moved
	// instead of copying every task. curMoved and nextMoved are the places
	// the frame that built each changed; shapes counts the shapes made.
	curShape, nextShape uint64
	shapes              uint64
	curMoved, nextMoved []int32
	// seq is the Seq of the samples of the state the last frame built
	// (model.Sample.Seq); sameAs is the seq before it when that frame
	// kept the task list, so that only the tasks at curMoved changed.
	seq, sameAs uint64
}

type taskRec struct {
	pid, tid, idx                   int
	reset                           bool
	start                           uint64
	comm, pcomm, cpus, cg           string
	hasComm, hasPComm, hasCP, hasCg bool
	dv, di, dr, dw, ds              uint64
	dState, dLast                   int64
	// extra are the moves of fields.Counters, in that order.
	extra [len(fields.Counters)]uint64
}

// apply decodes frame b onto d.st.
func (d *decoder) apply(b []byte) error {
	key := isKeyframe(b)
	if key {
		d.st.reset()
		d.curShape = 0
		d.synced = true
	}
	if !d.synced {
		return corrupt("delta frame with no keyframe before it")
	}
	// A frame that fails leaves a state no sample was made of: the next
	// one must not be taken as following the last sample.
	before := d.seq
	d.seq, d.sameAs = model.NextSeq(), 0
	shape := d.curShape
	st := &d.st
	d.recs = d.recs[:0]
	d.cgRecs = d.cgRecs[:0]
	// A new slice each frame: a sample handed out keeps its waits.
	st.waits = nil
	st.wakeups = nil
	st.stacks = nil
	st.source = ""
	var gone, readTimes, wakeups, stacks []byte
	hasWakeups, hasStacks := false, false
	// The wall clock moves as the monotonic one did in this frame, plus
	// its skew; the frame's monotonic change is known at its end.
	mono0 := st.mono
	var skew int64
	hasSkew := false
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
		case f.num == fWallSkew && f.typ == protowire.VarintType:
			skew, hasSkew = f.z(), true
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
		case f.num == fReadTimes && f.typ == protowire.BytesType:
			readTimes = f.b
		case f.num == fWakeups && f.typ == protowire.BytesType:
			wakeups, hasWakeups = f.b, true
		case f.num == fStacks && f.typ == protowire.BytesType:
			stacks, hasStacks = f.b, true
		case f.num == fSource && f.typ == protowire.BytesType:
			st.source = readString(f.b)
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
	if hasSkew {
		st.wall += st.mono - mono0 + skew
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
		r, before := &d.recs[i], &d.recs[i-1]
		if r.pid == before.pid && r.tid == before.tid {
			return corrupt("task %d/%d twice in one frame", r.pid, r.tid)
		}
		// The threads of a process, named together in a keyframe, share
		// its name and cgroup: one string each, not one per thread, so
		// the model's comparisons of them (a cgroup's threads are counted
		// every interval) find them equal without reading them.
		if r.hasCg && before.hasCg && r.cg == before.cg {
			r.cg = before.cg
		}
		if r.hasPComm && before.hasPComm && r.pcomm == before.pcomm {
			r.pcomm = before.pcomm
		}
	}
	if err := d.merge(gone); err != nil {
		return err
	}
	if shape != 0 && d.curShape == shape {
		d.sameAs = before
	}
	if err := applyReadTimes(st.tasks, readTimes); err != nil {
		return err
	}
	if hasWakeups {
		if err := d.applyWakeups(wakeups); err != nil {
			return err
		}
	}
	if hasStacks {
		return d.applyStacks(stacks)
	}
	return nil
}

// applyReadTimes sets every task's read time from frame field 14: each is
// the one before it in the list (the first: zero) unless the field says
// otherwise. Without the field (a file from before read times were kept,
// or a sampler that kept none) every task was read at the sample's time.
func applyReadTimes(tasks []model.TaskCounters, b []byte) error {
	var shift uint64
	if len(b) > 0 {
		var n int
		shift, n = protowire.ConsumeVarint(b)
		if n < 0 || shift > 62 {
			return corrupt("read times: unit 2^%d ns", shift)
		}
		b = b[n:]
	}
	var pred time.Duration
	next := -1 // index of the next task with a read time of its own
	var step time.Duration
	entry := func(last int) error {
		next = -1
		if len(b) == 0 {
			return nil
		}
		gap, n := protowire.ConsumeVarint(b)
		if n < 0 || gap >= uint64(len(tasks)-last-1) {
			return corrupt("read times: a task past the %d in the frame", len(tasks))
		}
		b = b[n:]
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return corrupt("read times cut short")
		}
		b = b[n:]
		z, lim := protowire.DecodeZigZag(v), int64(maxReadAt)>>shift
		if z > lim || z < -lim {
			return corrupt("read times: a step of %d units of 2^%d ns", z, shift)
		}
		next, step = last+1+int(gap), time.Duration(z<<shift)
		return nil
	}
	if err := entry(-1); err != nil {
		return err
	}
	for i := range tasks {
		if i == next {
			if pred += step; pred < 0 || pred > maxReadAt {
				return corrupt("task %d/%d read %v after its sample", tasks[i].PID, tasks[i].TID, pred)
			}
			if err := entry(i); err != nil {
				return err
			}
		}
		// Most tasks keep their read time from frame to frame: a write
		// to each of 10,000 tasks dirtied every line of the list, and
		// cost more than the comparison.
		if tasks[i].ReadAt != pred {
			tasks[i].ReadAt = pred
		}
	}
	return nil
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
	default:
		if x := col - countersPerTask; x >= 0 && x < len(r.extra) {
			r.extra[x] = uint64(z)
		}
	}
}

func parseTask(b []byte, lastPID int) (taskRec, error) {
	// Its place among the tasks is not known yet.
	r := taskRec{pid: lastPID, idx: -1}
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
		default:
			for x := range fields.Counters {
				if f.num == protowire.Number(fields.Counters[x].TaskField) {
					r.extra[x] = uint64(f.z())
				}
			}
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
			case sUnread:
				s.Unread = readString(f.b)
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
	if len(gone) == 0 && d.mergeInPlace() {
		return nil
	}
	return d.mergeAll(gone)
}

// mergeInPlace is merge for the usual frame, which neither adds nor
// removes a task, after frames that did neither: next holds the tasks
// st.tasks does, as of the frame before, so it is brought up to date by
// the places the last frame moved, then this frame's records are applied
// in their places. An hour at 10,000 threads, a few dozen of them busy,
// copied every task every frame, most of the decode's time. It reports
// false, having changed nothing, when the frame or the lists do not
// allow it.
func (d *decoder) mergeInPlace() bool {
	old := d.st.tasks
	if d.curShape == 0 || d.nextShape != d.curShape || len(d.next) != len(old) || len(d.nextLast) != len(old) {
		return false
	}
	for k := range d.recs {
		r := &d.recs[k]
		if r.idx >= 0 {
			continue // packed counters name the place
		}
		// The first task at or after r, by (PID, TID).
		lo, hi := 0, len(old)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if t := &old[m]; t.PID < r.pid || t.PID == r.pid && t.TID < r.tid {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(old) || old[lo].PID != r.pid || old[lo].TID != r.tid {
			return false // a new task: the list changes
		}
		r.idx = lo
	}
	next, nextLast := d.next, d.nextLast
	for _, i := range d.curMoved {
		next[i] = old[i]
	}
	for _, i := range d.nextMoved {
		nextLast[i] = deltas{}
	}
	moved := d.nextMoved[:0]
	for k := range d.recs {
		r := &d.recs[k]
		base, mv := &old[r.idx], deltas{r.dv, r.di, r.dr, r.dw}
		if r.reset {
			base, mv = &model.TaskCounters{}, deltas{}
		}
		next[r.idx] = r.applyTo(*base)
		nextLast[r.idx] = mv
		moved = append(moved, int32(r.idx))
	}
	d.next, d.st.tasks = old, next
	d.nextLast, d.st.last = d.st.last, nextLast
	d.nextMoved, d.curMoved = d.curMoved, moved
	return true
}

// mergeAll is merge copying every task into next.
func (d *decoder) mergeAll(gone []byte) error {
	// next is overwritten: until it is whole again it holds no shape.
	d.nextShape = 0
	changed := d.curShape == 0 // the list was emptied (a keyframe)
	moved := d.nextMoved[:0]
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
				changed = true
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
				changed = true
				continue
			}
			if r.pid == o.PID && r.tid == o.TID {
				base, mv := *o, deltas{r.dv, r.di, r.dr, r.dw}
				if r.reset {
					base, mv = model.TaskCounters{}, deltas{}
				}
				moved = append(moved, int32(len(out)))
				out = append(out, r.applyTo(base))
				outLast = append(outLast, mv)
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
	shape := d.curShape
	if changed {
		d.shapes++
		shape = d.shapes
	}
	d.nextShape, d.curShape = d.curShape, shape
	d.nextMoved, d.curMoved = d.curMoved, moved
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
	for x := range fields.Counters {
		t.Counters[x] += r.extra[x]
	}
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
		Wakeups:    d.st.wakeups,
		Stacks:     d.st.stacks,
		Source:     d.st.source,
		Seq:        d.seq,
	}
	if d.sameAs != 0 {
		dst.SameTasksAs, dst.Moved = d.sameAs, d.curMoved
	}
}
