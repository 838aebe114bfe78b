package sampler

import (
	"time"

	"github.com/ctxtop/ctxtop/internal/model"
)

// WaitLooker takes the wait-reason looks at a sampler's hot blocking threads
// between two passes (see waitlooks.go for how many and when). The live
// source arms it after each Snapshot and collects it at the next pass.
type WaitLooker struct{ w *looker }

// NewWaitLooker is the looks over s's procfs; Close stops them.
func (s *Sampler) NewWaitLooker() *WaitLooker { return &WaitLooker{newLooker(s.rootFD)} }

// Collect stops the interval's looks and appends their tallies to dst,
// sorted by PID and TID.
func (w *WaitLooker) Collect(dst []model.WaitTally) []model.WaitTally { return w.w.collect(dst) }

// LookNow looks at once at the hot blocking threads of snap that cur has
// no tally for (one that just became hot, or a settled one), adding their
// tallies to cur.Waits in order. It reports whether it added any.
func (w *WaitLooker) LookNow(snap *model.Snapshot, cur *model.Sample) bool {
	if !w.w.lookNow(snap, cur) {
		return false
	}
	cur.Waits = sortWaits(cur.Waits)
	return true
}

// Arm schedules the looks over the next interval at snap's hot blocking
// threads.
func (w *WaitLooker) Arm(snap *model.Snapshot) { w.w.arm(snap) }

// ArmOver is Arm with the looks spread over span: the rest of an interval
// whose hot threads were found before it ended.
func (w *WaitLooker) ArmOver(snap *model.Snapshot, span time.Duration) { w.w.armOver(snap, span) }

// Close stops the looks for good.
func (w *WaitLooker) Close() { w.w.close() }
