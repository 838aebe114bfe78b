package record

import (
	"cmp"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ctxtop/ctxtop/internal/containers"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sorts"
)

// appendCgroups writes the cgroups that are new or whose counters changed
// since the state, and the paths of those gone; it leaves the state equal
// to cur. Both lists are sorted by path.
func (e *encoder) appendCgroups(b []byte, cur []model.CgroupCounters) []byte {
	prev := e.st.cgroups
	var zero model.CgroupCounters
	i := 0
	for j := range cur {
		c := &cur[j]
		for i < len(prev) && prev[i].Path < c.Path {
			b = appendStr(b, fCgroupGone, prev[i].Path)
			i++
		}
		p := &zero
		if i < len(prev) && prev[i].Path == c.Path {
			p = &prev[i]
			i++
			if *p == *c {
				continue
			}
		}
		m := appendStr(e.cgroup[:0], cPath, c.Path)
		if p.HasThrottling != c.HasThrottling {
			m = protowire.AppendTag(m, cHasThrottling, protowire.VarintType)
			m = protowire.AppendVarint(m, protowire.EncodeBool(c.HasThrottling))
		}
		m = appendDelta(m, cPeriods, p.Periods, c.Periods)
		m = appendDelta(m, cThrottled, p.Throttled, c.Throttled)
		m = appendDelta(m, cThrottledNs, p.ThrottledNs, c.ThrottledNs)
		m = appendF64(m, cLimit, p.LimitCPUs, c.LimitCPUs)
		if p.Container != c.Container && (p.Container == nil || c.Container == nil || *p.Container != *c.Container) {
			m = e.appendContainer(m, c.Container)
		}
		b = appendMsg(b, fCgroup, m)
		e.cgroup = m
	}
	for ; i < len(prev); i++ {
		b = appendStr(b, fCgroupGone, prev[i].Path)
	}
	e.st.cgroups = append(e.st.cgroups[:0], cur...)
	return b
}

// appendContainer writes the container message of a cgroup; an empty
// one for none.
func (e *encoder) appendContainer(b []byte, c *model.Container) []byte {
	m := e.container[:0]
	if c != nil {
		for _, f := range [...]struct {
			num protowire.Number
			s   string
		}{{kRuntime, c.Runtime}, {kID, c.ID}, {kName, c.Name}, {kPod, c.Pod}, {kNamespace, c.Namespace}, {kPodUID, c.PodUID}, {kQoS, c.QoS}} {
			if f.s != "" {
				m = appendStr(m, f.num, f.s)
			}
		}
	}
	e.container = m
	return appendMsg(b, cContainer, m)
}

// parseContainer reads a container message: nil for an empty one. Its
// strings are untrusted as every name in a recording is, and bounded as
// the live resolver bounds them.
func parseContainer(b []byte) (*model.Container, error) {
	var c model.Container
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return nil, err
		}
		b = b[n:]
		if f.typ != protowire.BytesType {
			continue
		}
		var dst *string
		switch f.num {
		case kRuntime:
			dst = &c.Runtime
		case kID:
			dst = &c.ID
		case kName:
			dst = &c.Name
		case kPod:
			dst = &c.Pod
		case kNamespace:
			dst = &c.Namespace
		case kPodUID:
			dst = &c.PodUID
		case kQoS:
			dst = &c.QoS
		default:
			continue
		}
		*dst = containers.Clean(string(f.b))
	}
	if c == (model.Container{}) {
		return nil, nil
	}
	return model.Seal(c), nil
}

// appendWaits writes the interval's wait looks in full: they are no
// counters, and only the few hottest threads have any.
func (e *encoder) appendWaits(b []byte, waits []model.WaitTally) []byte {
	lastPID := 0
	for i := range waits {
		w := &waits[i]
		m := e.wait[:0]
		m = appendZ(m, wPID, int64(w.PID-lastPID))
		m = appendZ(m, wTID, int64(w.TID-w.PID))
		m = appendZ(m, wLooks, int64(w.Looks))
		for _, r := range w.Reasons {
			rm := appendStr(e.reason[:0], rWord, r.Reason)
			rm = appendZ(rm, rN, int64(r.N))
			m = appendMsg(m, wReason, rm)
			e.reason = rm
		}
		if w.Wchan != "" {
			m = appendStr(m, wWchan, w.Wchan)
		}
		if w.Syscall != "" {
			m = appendStr(m, wSyscall, w.Syscall)
		}
		if w.Settled {
			m = appendZ(m, wSettled, 1)
		}
		b = appendMsg(b, fWait, m)
		e.wait = m
		lastPID = w.PID
	}
	return b
}

// cgroupRec is one cgroup field of a frame: an update, or a path gone.
type cgroupRec struct {
	gone       bool
	path       string
	hasThrot   bool
	setThrot   bool
	dp, dt, dn uint64
	limit      float64
	setLimit   bool
	ctr        *model.Container
	setCtr     bool
}

func parseCgroup(b []byte) (cgroupRec, error) {
	var r cgroupRec
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return r, err
		}
		b = b[n:]
		switch {
		case f.num == cPath && f.typ == protowire.BytesType:
			r.path = readString(f.b)
		case f.num == cHasThrottling && f.typ == protowire.VarintType:
			r.hasThrot, r.setThrot = f.v == 1, true
		case f.num == cPeriods && f.typ == protowire.VarintType:
			r.dp = uint64(f.z())
		case f.num == cThrottled && f.typ == protowire.VarintType:
			r.dt = uint64(f.z())
		case f.num == cThrottledNs && f.typ == protowire.VarintType:
			r.dn = uint64(f.z())
		case f.num == cLimit && f.typ == protowire.Fixed64Type:
			r.limit, r.setLimit = math.Float64frombits(f.v), true
		case f.num == cContainer && f.typ == protowire.BytesType:
			if r.ctr, err = parseContainer(f.b); err != nil {
				return r, err
			}
			r.setCtr = true
		}
	}
	return r, nil
}

// applyCgroups merges a frame's cgroup records into the state's sorted
// list. Two records for one path (two paths that sanitize alike) apply in
// the order written.
func (d *decoder) applyCgroups(recs []cgroupRec) error {
	if len(recs) == 0 {
		return nil
	}
	sorts.StableFunc(recs, func(a, b cgroupRec) int { return cmp.Compare(a.path, b.path) })
	old := d.st.cgroups
	out := make([]model.CgroupCounters, 0, len(old)+len(recs))
	i := 0
	for k := 0; k < len(recs); {
		path := recs[k].path
		for i < len(old) && old[i].Path < path {
			out = append(out, old[i])
			i++
		}
		c, present := model.CgroupCounters{Path: path}, false
		if i < len(old) && old[i].Path == path {
			c, present = old[i], true
			i++
		}
		for ; k < len(recs) && recs[k].path == path; k++ {
			r := &recs[k]
			if r.gone {
				c, present = model.CgroupCounters{Path: path}, false
				continue
			}
			present = true
			if r.setThrot {
				c.HasThrottling = r.hasThrot
			}
			c.Periods += r.dp
			c.Throttled += r.dt
			c.ThrottledNs += r.dn
			if r.setLimit {
				c.LimitCPUs = r.limit
			}
			if r.setCtr {
				c.Container = r.ctr
			}
		}
		if present {
			out = append(out, c)
		}
	}
	out = append(out, old[i:]...)
	if len(out) > maxCgroups {
		return corrupt("more than %d cgroups", maxCgroups)
	}
	d.st.cgroups = out
	return nil
}

func parseWait(b []byte, lastPID int) (model.WaitTally, error) {
	w := model.WaitTally{PID: lastPID}
	tid := 0
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return w, err
		}
		b = b[n:]
		switch {
		case f.num == wPID && f.typ == protowire.VarintType:
			w.PID = clampInt(int64(lastPID) + f.z())
		case f.num == wTID && f.typ == protowire.VarintType:
			tid = clampInt(f.z())
		case f.num == wLooks && f.typ == protowire.VarintType:
			w.Looks = clampInt(f.z())
		case f.num == wReason && f.typ == protowire.BytesType:
			r, err := parseReason(f.b)
			if err != nil {
				return w, err
			}
			if len(w.Reasons) >= maxReasons {
				return w, corrupt("more than %d wait reasons for one thread", maxReasons)
			}
			w.Reasons = append(w.Reasons, r)
		case f.num == wWchan && f.typ == protowire.BytesType:
			w.Wchan = readString(f.b)
		case f.num == wSyscall && f.typ == protowire.BytesType:
			w.Syscall = readString(f.b)
		case f.num == wSettled && f.typ == protowire.VarintType:
			w.Settled = f.z() != 0
		}
	}
	w.TID = clampInt(int64(w.PID) + int64(tid))
	if w.PID <= 0 || w.TID <= 0 {
		return w, corrupt("wait looks for %d/%d: not a PID", w.PID, w.TID)
	}
	return w, nil
}

func parseReason(b []byte) (model.ReasonCount, error) {
	var r model.ReasonCount
	for len(b) > 0 {
		f, n, err := nextField(b)
		if err != nil {
			return r, err
		}
		b = b[n:]
		switch {
		case f.num == rWord && f.typ == protowire.BytesType:
			r.Reason = readString(f.b)
		case f.num == rN && f.typ == protowire.VarintType:
			r.N = clampInt(f.z())
		}
	}
	return r, nil
}
