package stacks

import (
	"cmp"
	"slices"
	"strings"
	"time"

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
		Dropped: c.raw.Dropped - c.lastRaw.Dropped, InterruptWakings: c.raw.InterruptWakings - c.lastRaw.InterruptWakings,
	}
	c.lastRaw.Dropped, c.lastRaw.InterruptWakings = c.raw.Dropped, c.raw.InterruptWakings
	iv := interval{blocked: map[int]map[string]*counted{}, woken: map[int]map[string]*counted{}}
	for _, b := range c.raw.Blocked {
		add(iv.blocked, b.TID, c.resolve(&st, b.PID, b.KStack, b.UStack, &b.GoStack), b.PID, "", b.Count)
	}
	for _, w := range c.raw.Wakes {
		add(iv.woken, w.WakeeTID, c.resolve(&st, w.WakerPID, w.KStack, w.UStack, nil), w.WakerPID, w.WakerComm, w.Count)
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
			out = append(out, model.StackCount{TID: tid, PID: e.pid, Waker: e.waker, Count: e.count,
				Stack: model.Stack{Frames: e.r.frames, KernelFrames: e.r.kernelFrames, Own: e.r.own, NoFramePointers: e.r.noFP}})
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
	c.freeStale()
	c.targets = c.choose(snap)
	c.followGo(c.targetPIDs(snap))
	if err := c.setTargets(c.sampling(snap)); err != nil && snap.Stacks != nil {
		// Live only: a replay shows the stacks the read had.
		snap.Stacks.Unavailable = "setting stack targets: " + err.Error()
	}
}
