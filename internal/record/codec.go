package record

// The frame codec is split by direction: encode.go turns Samples into
// frames, decode.go applies frames to a state and gives Samples back. This
// file holds what both sides share: the state a frame is encoded against,
// the field numbers, the bounds and the field reader.

import (
	"fmt"
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
	// wakeups is the current frame's tracer read alone, like waits; nil
	// when the tracer was off.
	wakeups *model.WakeupSample
	// source is the current frame's alone, like waits.
	source string
	// wakeCPUs and wakeDropped are the running totals of the last frame
	// that had a tracer read, which the next one's are written against.
	wakeCPUs    []model.CPUSchedCount
	wakeDropped uint64
	// stacks is the current frame's stack read alone, like waits; nil
	// when the tracer was off. stackTab holds the strings and stacks
	// defined since the last keyframe, which its counts name.
	stacks   *model.StackSample
	stackTab stackTables
}

type deltas [4]uint64

func (s *state) reset() {
	tasks, last, cgs, wc := s.tasks[:0], s.last[:0], s.cgroups[:0], s.wakeCPUs[:0]
	rpc, ipc := s.sys.ReschedPerCPU[:0], s.sys.InterruptsPerCPU[:0]
	*s = state{tasks: tasks, last: last, cgroups: cgs, wakeCPUs: wc}
	s.sys.ReschedPerCPU, s.sys.InterruptsPerCPU = rpc, ipc
}

// clone is a copy that shares nothing a later frame changes.
func (s *state) clone() state {
	c := *s
	c.tasks = append([]model.TaskCounters(nil), s.tasks...)
	c.last = append([]deltas(nil), s.last...)
	c.sys.ReschedPerCPU = append([]uint64(nil), s.sys.ReschedPerCPU...)
	c.sys.InterruptsPerCPU = append([]uint64(nil), s.sys.InterruptsPerCPU...)
	c.wakeCPUs = append([]model.CPUSchedCount(nil), s.wakeCPUs...)
	c.stackTab = s.stackTab.clone()
	return c
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
	// fReadTimes (format 3) holds when each task's counters were read;
	// fWakeups (format 3) the wake-up tracer's read.
	fReadTimes = 14
	fWakeups   = 15
	// fWallSkew (format 3) replaces fWall: the change of the wall clock
	// less the change of the monotonic clock, zero but when the wall
	// clock is stepped.
	fWallSkew = 16
	// fSource names what read the frame's tasks (model.Sample.Source). It
	// is written in every frame that has one, so a reader that starts at
	// any keyframe knows it; older readers skip it.
	fSource = 17
	// fStacks (format 4) is the stack tracer's read: symbolized stacks
	// and their counts (stacks.go).
	fStacks = 18
)

// maxReadAt bounds a task's read time after its sample's: a pass takes
// milliseconds, seconds on a wedged host; a file claiming more is damaged.
const maxReadAt = time.Hour

// countersPerTask is how many varints each task takes in the packed
// counter field before the raw counters of package fields: its index,
// then seven counters. The writer appends one column per fields.Counters
// entry; the count that opens the field lets a reader skip columns it does
// not know, and a reader of a file without them leaves those counters at
// zero.
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

// System field numbers.
const (
	sCtxt        = 1
	sIntr        = 2
	sRunning     = 3
	sBlocked     = 4
	sCPUs        = 5
	sResched     = 6
	sReschedPer  = 7
	sIntrPer     = 8
	sPSI         = 9
	sHasPSI      = 10
	sLoad1       = 11
	sLoad5       = 12
	sLoad15      = 13
	sPSITotal    = 14
	sHasPSITotal = 15
	// sUnread is why /proc/stat was not read, written when it changes; a
	// reader that predates it sees zero counters, a step back, which
	// gives the same intervals no host-wide rates.
	sUnread       = 16
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
	// cContainer is what runs in the group, a message of its own written
	// when it changed: an empty one says none.
	cContainer = 7
)

// Container field numbers.
const (
	kRuntime   = 1
	kID        = 2
	kName      = 3
	kPod       = 4
	kNamespace = 5
	kPodUID    = 6
	kQoS       = 7
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
