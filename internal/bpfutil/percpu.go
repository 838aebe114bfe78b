package bpfutil

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/btf"
)

// PerCPULayout is where this kernel keeps the per-CPU variables that tell
// a wake-up in an interrupt from a task's, in bytes from the CPU's run
// queue (runqueues), which the waking program reaches from the current
// task. Per-CPU variables sit in one section whose copy for each CPU has
// the same layout, so the distance between two is that between their
// offsets in the section, which the kernel's BTF gives.
type PerCPULayout struct {
	PreemptCount, HrtimerBases, TimerBases int64
	TimerBasesN                            uint32
}

// percpuSection is the BTF data section of the kernel's per-CPU variables.
const percpuSection = ".data..percpu"

// ReadPerCPULayout finds the layout in the kernel's BTF. A kernel without
// the run queue or the preempt count as per-CPU variables (other
// architectures keep the count in the task) has none: the zero layout,
// which leaves the program taking every waker for a thread.
func ReadPerCPULayout(spec *btf.Spec) (PerCPULayout, error) {
	var l PerCPULayout
	var sec *btf.Datasec
	if err := spec.TypeByName(percpuSection, &sec); err != nil {
		if errors.Is(err, btf.ErrNotFound) {
			return l, nil
		}
		return l, fmt.Errorf("kernel BTF: %w", err)
	}
	at := map[string]int64{}
	var timerBases *btf.Var
	for _, v := range sec.Vars {
		vv, ok := v.Type.(*btf.Var)
		if !ok {
			continue
		}
		switch vv.Name {
		case "runqueues", "__preempt_count", "hrtimer_bases":
			at[vv.Name] = int64(v.Offset)
		case "timer_bases":
			at[vv.Name] = int64(v.Offset)
			timerBases = vv
		}
	}
	rq, ok := at["runqueues"]
	pc, ok2 := at["__preempt_count"]
	if !ok || !ok2 {
		return l, nil
	}
	l.PreemptCount = pc - rq
	if hb, ok := at["hrtimer_bases"]; ok {
		l.HrtimerBases = hb - rq
	}
	if tb, ok := at["timer_bases"]; ok {
		// DEFINE_PER_CPU(struct timer_base, timer_bases[NR_BASES]).
		if a, ok := btf.UnderlyingType(timerBases.Type).(*btf.Array); ok && a.Nelems > 0 {
			l.TimerBases, l.TimerBasesN = tb-rq, a.Nelems
		}
	}
	return l, nil
}

// PreemptCountFromRunQueue is where this kernel keeps a CPU's preempt count,
// in bytes from the CPU's run queue, for other programs that must tell a
// task's wake-up from an interrupt's; 0 when the kernel
// keeps no per-CPU preempt count.
func PreemptCountFromRunQueue() (int64, error) {
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		return 0, fmt.Errorf("kernel BTF: %w", err)
	}
	l, err := ReadPerCPULayout(kernel)
	return l.PreemptCount, err
}
