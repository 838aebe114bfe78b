package bpfutil

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf/btf"
	"github.com/google/go-cmp/cmp"
)

// percpuSpec is kernel BTF whose per-CPU section holds vars at offsets.
func percpuSpec(t *testing.T, vars map[string]uint32) *btf.Spec {
	t.Helper()
	i32 := &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed}
	base := &btf.Struct{Name: "timer_base", Size: 64}
	sec := &btf.Datasec{Name: percpuSection}
	for name, off := range vars {
		var typ btf.Type = i32
		size := uint32(4)
		if name == "timer_bases" {
			typ, size = &btf.Array{Index: i32, Type: base, Nelems: 3}, 192
		}
		sec.Vars = append(sec.Vars, btf.VarSecinfo{Type: &btf.Var{Name: name, Type: typ, Linkage: btf.GlobalVar}, Offset: off, Size: size})
	}
	sec.Size = 1 << 16
	b, err := btf.NewBuilder([]btf.Type{sec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Marshal(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := btf.LoadSpecFromReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func TestReadPerCPULayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]uint32
		want PerCPULayout
	}{
		// As on x86-64 6.18: the count and the timers before the run queue.
		{"x86", map[string]uint32{"__preempt_count": 86064, "hrtimer_bases": 115072, "timer_bases": 100864, "runqueues": 178816},
			PerCPULayout{PreemptCount: 86064 - 178816, HrtimerBases: 115072 - 178816, TimerBases: 100864 - 178816, TimerBasesN: 3}},
		{"no timers", map[string]uint32{"__preempt_count": 64, "runqueues": 4096}, PerCPULayout{PreemptCount: 64 - 4096}},
		// arm64 and others keep the count in the task: none here.
		{"no per-CPU preempt count", map[string]uint32{"runqueues": 4096, "hrtimer_bases": 64}, PerCPULayout{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadPerCPULayout(percpuSpec(t, tc.vars))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
		})
	}
}
