package stacks

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
	"github.com/ctxtop/ctxtop/internal/model"
	"github.com/ctxtop/ctxtop/internal/sorts"
)

// Drain is the interval's read for the sample that closes it: each
// target's stacks of the interval, symbolized here (a recording is read on
// other hosts, where addresses mean nothing), with their counts; nil while
// the collector is off. The pipeline makes the shares from the last few
// (model.StackWindow), live and in a replay alike. Call Retarget with the
// Snapshot made from it.
func (c *Collector) Drain() *model.StackSample {
	c.life.Lock()
	defer c.life.Unlock()
	tr, ok, why := c.life.Ready()
	if !ok && why == "" {
		return nil
	}
	now := time.Now()
	if !ok {
		return &model.StackSample{Time: now, Unavailable: why}
	}
	if err := tr.Read(&c.raw); err != nil {
		return &model.StackSample{Time: now, Unavailable: err.Error()}
	}
	c.refresh++
	var st model.Stacks
	out := &model.StackSample{
		Time: now, Targets: slices.Clone(c.targets),
		// A capture the ring had no room for is a sampled event not
		// counted, as one a full count map turned away.
		Dropped:          c.raw.Dropped + c.raw.CaptureLost - c.lastRaw.Dropped - c.lastRaw.CaptureLost,
		InterruptWakings: c.raw.InterruptWakings - c.lastRaw.InterruptWakings,
	}
	c.lastRaw.Dropped, c.lastRaw.InterruptWakings, c.lastRaw.CaptureLost = c.raw.Dropped, c.raw.InterruptWakings, c.raw.CaptureLost
	iv := interval{blocked: map[int]map[string]*counted{}, woken: map[int]map[string]*counted{}}
	// A count of the maps is of samples taken at the target's sampling
	// as last set (it changes only here, between reads); a capture says
	// what it stood for itself.
	for _, b := range c.raw.Blocked {
		add(iv.blocked, b.TID, c.resolve(&st, b.PID, b.KStack, b.UStack, &b.GoStack), b.PID, "", b.Count, b.Count*uint64(max(c.every[b.TID], 1)))
	}
	for _, w := range c.raw.Wakes {
		add(iv.woken, w.WakeeTID, c.resolve(&st, w.WakerPID, w.KStack, w.UStack, nil), w.WakerPID, w.WakerComm, w.Count, w.Count*uint64(max(c.every[w.WakeeTID], 1)))
	}
	if _, err := tr.ReadCaptures(func(cp *Capture) {
		r := c.resolveCapture(&st, cp)
		if cp.Kind == CaptureBlock {
			add(iv.blocked, cp.Target, r, cp.PID, "", 1, uint64(max(cp.Weight, 1)))
		} else {
			add(iv.woken, cp.Target, r, cp.PID, c.comm(&cp.Comm), 1, uint64(max(cp.Weight, 1)))
		}
	}); err != nil {
		return &model.StackSample{Time: now, Unavailable: err.Error()}
	}
	// Attached for a part of the interval only, what was seen stands for
	// the whole of it. The interval ends when the ring was found empty:
	// captures taken while it was read (symbolizing takes a while) are in
	// this read, and so is the time they were taken in.
	scale, attached := c.duty.scale(time.Now())
	out.Attached = attached
	for _, m := range []map[int]map[string]*counted{iv.blocked, iv.woken} {
		for _, byStack := range m {
			for _, e := range byStack {
				e.weight = scaled(e.weight, scale)
			}
		}
	}
	out.KernelHidden = st.KernelHidden
	out.Blocked, out.Woken = stackCounts(iv.blocked), stackCounts(iv.woken)
	return out
}

// stackCounts lists m's counts sorted by thread, waker and stack.
func stackCounts(m map[int]map[string]*counted) []model.StackCount {
	var out []model.StackCount
	for tid, byStack := range m {
		for _, e := range byStack {
			out = append(out, model.StackCount{TID: tid, PID: e.pid, Waker: e.waker, Count: e.count, Weight: e.weight,
				Stack: model.Stack{Frames: e.r.frames, KernelFrames: e.r.kernelFrames, Own: e.r.own, NoFramePointers: e.r.noFP, Truncated: e.r.truncated}})
		}
	}
	sorts.Func(out, func(a, b model.StackCount) int {
		return cmp.Or(cmp.Compare(a.TID, b.TID), strings.Compare(a.Waker, b.Waker), slices.Compare(a.Frames, b.Frames))
	})
	return out
}

// Retarget chooses the next targets from snap, the Snapshot made with the
// last Drain, sets how often each is sampled, and frees the kernel's
// stacks no count referred to for a window. It does nothing while the
// collector is off or failed.
func (c *Collector) Retarget(snap *model.Snapshot) {
	c.life.Lock()
	defer c.life.Unlock()
	if _, ok, _ := c.life.Ready(); !ok {
		return
	}
	k := duty(snap.System.ContextSwitchesPerSec, snap.Interval)
	if k > 1 {
		// Detached from here until the window: what follows takes
		// milliseconds (a new target's process is read), which would
		// otherwise be attached time outside the window.
		c.duty.cancel()
		c.life.Fail(c.attach(c.tracer(), false))
	}
	c.freeStale()
	c.targets = c.choose(snap)
	c.followGo(c.targetPIDs(snap))
	ts := c.sampling(snap, k)
	clear(c.every)
	for _, t := range ts {
		c.every[t.TID] = t.Every
	}
	if err := c.setTargets(ts, k, snap.Interval); err != nil && snap.Stacks != nil {
		// Live only: a replay shows the stacks the read had.
		snap.Stacks.Unavailable = "setting stack targets: " + err.Error()
	}
}

// comm is a waker's name, the same string for the same name: a waker
// that wakes its target thousands of times an interval is named once.
func (c *Collector) comm(b *[16]int8) string {
	if s, ok := c.comms[*b]; ok {
		return s
	}
	s := bpfutil.Comm(b)
	if len(c.comms) >= 4096 {
		clear(c.comms)
	}
	c.comms[*b] = s
	return s
}
