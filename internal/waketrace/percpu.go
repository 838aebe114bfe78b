package waketrace

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"

	"github.com/ctxtop/ctxtop/internal/bpfutil"
)

// setPerCPULayout gives the waking program this kernel's layout.
func setPerCPULayout(spec *ebpf.CollectionSpec) error {
	kernel, err := btf.LoadKernelSpec()
	if err != nil {
		return fmt.Errorf("kernel BTF: %w", err)
	}
	l, err := bpfutil.ReadPerCPULayout(kernel)
	if err != nil {
		return err
	}
	for name, v := range map[string]any{
		waketraceVarPreemptCountFromRq: l.PreemptCount,
		waketraceVarHrtimerBasesFromRq: l.HrtimerBases,
		waketraceVarTimerBasesFromRq:   l.TimerBases,
		waketraceVarTimerBasesN:        l.TimerBasesN,
	} {
		vs, ok := spec.Variables[name]
		if !ok {
			return fmt.Errorf("the program has no variable %s", name)
		}
		if err := vs.Set(v); err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
	}
	return nil
}
